import { describe, expect, it } from 'vitest';
import { askAfter, eventsAfterHeld } from '../../../shared/api/events-after.js';

const event = (id: number, at = `2026-01-01T00:00:0${id}Z`, type = 'log') => ({ id, at, type });

describe('eventsAfterHeld', () => {
  it('asks for the events from the one held on, and gives those after it while the log holds it as it was', () => {
    const held = { id: 3, at: event(3).at, type: 'log' };
    expect(askAfter(held)).toBe(2);
    expect(eventsAfterHeld(held, [event(3), event(4), event(5)])).toEqual([event(4), event(5)]);
    expect(eventsAfterHeld(held, [event(3)])).toEqual([]);
  });

  it('gives null for a log that no longer starts with the event held: another id, time or type, or none at all', () => {
    const held = { id: 3, at: event(3).at, type: 'log' };
    expect(eventsAfterHeld(held, [])).toBeNull();
    expect(eventsAfterHeld(held, [event(4), event(5)])).toBeNull();
    expect(eventsAfterHeld(held, [event(3, '2026-01-02T00:00:03Z'), event(4)])).toBeNull();
    expect(eventsAfterHeld(held, [event(3, event(3).at, 'version'), event(4)])).toBeNull();
  });

  it('takes the id alone for an event held without its time or type (a log seen only up to a size)', () => {
    expect(eventsAfterHeld({ id: 3 }, [event(3, 'any time', 'any type'), event(4)])).toEqual([event(4)]);
  });
});

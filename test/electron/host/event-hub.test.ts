import { describe, expect, it } from 'vitest';
import type { HostEvent } from '../../../shared/api/contract.js';
import { EventHub } from '../../../electron/host/event-hub.js';

const changed = (taskId: string) => ({ type: 'task-changed' as const, taskId, version: 1 });

describe('EventHub', () => {
  it('numbers events 1, 2, 3 across the whole host', () => {
    const hub = new EventHub();
    expect(hub.publish(changed('a')).id).toBe(1);
    expect(hub.publish({ type: 'task-removed', taskId: 'b' }).id).toBe(2);
    expect(hub.latestId).toBe(2);
  });

  it('replays exactly the kept events after lastEventId, then continues live', () => {
    const hub = new EventHub({ capacity: 100 });
    for (let i = 0; i < 10; i++) hub.publish(changed(`t${i}`));
    const seen: number[] = [];
    hub.subscribe((e) => seen.push(e.id), 6);
    hub.publish(changed('x'));
    expect(seen).toEqual([7, 8, 9, 10, 11]);
  });

  it('gives a subscriber without lastEventId only new events', () => {
    const hub = new EventHub();
    hub.publish(changed('a'));
    const seen: number[] = [];
    hub.subscribe((e) => seen.push(e.id));
    hub.publish(changed('b'));
    expect(seen).toEqual([2]);
  });

  it('asks for a resync when the ring no longer reaches back, and when the id was never issued', () => {
    const hub = new EventHub({ capacity: 5 });
    for (let i = 0; i < 20; i++) hub.publish(changed(`t${i}`));
    const old: HostEvent[] = [];
    hub.subscribe((e) => old.push(e), 3);
    expect(old).toHaveLength(1);
    expect(old[0]).toMatchObject({ type: 'resync', id: 20 });
    // The oldest kept event is 16; asking from 15 is still complete.
    const edge: number[] = [];
    hub.subscribe((e) => edge.push(e.id), 15);
    expect(edge).toEqual([16, 17, 18, 19, 20]);
    const future: HostEvent[] = [];
    hub.subscribe((e) => future.push(e), 999);
    expect(future[0]).toMatchObject({ type: 'resync', id: 20 });
  });

  it('keeps delivering to others when one subscriber throws, and stops after unsubscribe', () => {
    const hub = new EventHub();
    const seen: number[] = [];
    hub.subscribe(() => {
      throw new Error('closed window');
    });
    const off = hub.subscribe((e) => seen.push(e.id));
    hub.publish(changed('a'));
    off();
    hub.publish(changed('b'));
    expect(seen).toEqual([1]);
    expect(hub.subscriberCount).toBe(1);
  });

  it('leaves no gap when a subscriber publishes while it is being caught up', () => {
    const hub = new EventHub();
    hub.publish(changed('a'));
    hub.publish(changed('b'));
    const seen: number[] = [];
    let published = false;
    hub.subscribe((e) => {
      seen.push(e.id);
      if (!published) {
        published = true;
        hub.publish(changed('c'));
      }
    }, 0);
    hub.publish(changed('d'));
    expect(seen).toEqual([1, 2, 3, 4]);
  });
});

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { deriveDisplayStatus, DisplayStatus } from '../../../shared/checkpoint/task-state.js';
import { TaskStatus } from '../../../shared/checkpoint/schema.js';
import { sampleCheckpoint } from './sample-checkpoint.js';

const calm = { leaseHeld: false, drift: false, unreadable: false };

describe('deriveDisplayStatus', () => {
  it('shows a running checkpoint as running only while a live lease holds it', () => {
    const cp = sampleCheckpoint({ status: 'running' });
    expect(deriveDisplayStatus(cp, { ...calm, leaseHeld: true })).toBe('running');
    expect(deriveDisplayStatus(cp, calm)).toBe('interrupted');
  });

  it('shows a missing or unreadable checkpoint as unreadable, whatever else is known', () => {
    expect(deriveDisplayStatus(null, { leaseHeld: true, drift: true, unreadable: false })).toBe('unreadable');
    expect(deriveDisplayStatus(sampleCheckpoint(), { leaseHeld: true, drift: false, unreadable: true })).toBe('unreadable');
  });

  it('lets drift override a finished or stopped task, but not a live run', () => {
    expect(deriveDisplayStatus(sampleCheckpoint({ status: 'done' }), { ...calm, drift: true })).toBe('drifted');
    expect(deriveDisplayStatus(sampleCheckpoint({ status: 'running' }), { ...calm, drift: true })).toBe('drifted');
    expect(deriveDisplayStatus(sampleCheckpoint({ status: 'running' }), { ...calm, drift: true, leaseHeld: true })).toBe('running');
  });

  it('passes the checkpoint status through when nothing overrides it, even if a lease is held', () => {
    for (const status of ['waiting_approval', 'waiting_human', 'failed', 'halted', 'done'] as const) {
      expect(deriveDisplayStatus(sampleCheckpoint({ status }), calm)).toBe(status);
      expect(deriveDisplayStatus(sampleCheckpoint({ status }), { ...calm, leaseHeld: true })).toBe(status);
    }
  });

  it('never says running without a lease, and always returns a known display status', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TaskStatus.options),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (status, leaseHeld, drift, unreadable) => {
          const shown = deriveDisplayStatus(sampleCheckpoint({ status }), { leaseHeld, drift, unreadable });
          expect(DisplayStatus.options).toContain(shown);
          if (shown === 'running') expect(leaseHeld && status === 'running').toBe(true);
          if (unreadable) expect(shown).toBe('unreadable');
        },
      ),
    );
  });
});

/**
 * The task row's summary: the listing's fields of the newest version, the
 * plan's steps encoded once per step object, so a save that changed one step
 * encodes that step alone and still writes what a full encoding would.
 */
import { describe, expect, it } from 'vitest';
import { Checkpoint } from '../../../../shared/checkpoint/schema.js';
import { sealJson } from '../../../../electron/store/frozen-json.js';
import { SUMMARY_MAX_ITEMS, summaryOf } from '../../../../electron/store/postgres/pg-summary.js';
import { makeCheckpoint } from '../store-test-helpers.js';

/** The plan as the listing shows it, encoded the long way. */
const planOf = (cp: Checkpoint) =>
  cp.plan.map((s) => ({
    id: s.id,
    name: s.name,
    status: s.status,
    ...(s.started_at !== undefined ? { started_at: s.started_at } : {}),
    ...(s.finished_at !== undefined ? { finished_at: s.finished_at } : {}),
  }));

/** A version as a store keeps it: validated whole and sealed. */
const checkpoint = (steps: number, goal = 'test the store'): Checkpoint =>
  sealJson(Checkpoint.parse({ ...makeCheckpoint('t', steps, { goal }), version: 1, history: { count: 0, head: null } }));

describe('the summary of a task row', () => {
  it('holds the plan steps between goal and current_step, whatever the goal says', () => {
    // A goal holding the very bytes the plan is put after: JSON escapes its quotes, so they cannot be taken for the key.
    const cp = checkpoint(4, 'summarize ,"plan":[] and "quotes"');
    const parsed = JSON.parse(summaryOf(cp)!) as Record<string, unknown>;
    expect(parsed.goal).toBe(cp.goal);
    expect(parsed.plan).toEqual(planOf(cp));
    const keys = Object.keys(parsed);
    expect(keys.slice(keys.indexOf('goal'), keys.indexOf('goal') + 3)).toEqual(['goal', 'plan', 'current_step']);
  });

  it('follows each version: a changed step is encoded anew, the steps shared with the version before as they were', () => {
    const first = checkpoint(3);
    expect(JSON.parse(summaryOf(first)!).plan).toEqual(planOf(first));
    const plan = first.plan.slice();
    plan[1] = { ...plan[1], status: 'done', started_at: '2026-01-01T00:00:01Z', finished_at: '2026-01-01T00:00:02Z' };
    const second = sealJson({ ...first, plan, version: 2 } as Checkpoint, first);
    expect(second.plan[0]).toBe(first.plan[0]);
    const summary = JSON.parse(summaryOf(second)!) as { version: number; plan: unknown[] };
    expect(summary.version).toBe(2);
    expect(summary.plan).toEqual(planOf(second));
    expect(summary.plan[1]).toMatchObject({ status: 'done', finished_at: '2026-01-01T00:00:02Z' });
    // The first version's summary is unchanged by the second's.
    expect(JSON.parse(summaryOf(first)!).plan).toEqual(planOf(first));
  });

  it('is not kept for a task with more list items than SUMMARY_MAX_ITEMS', () => {
    expect(summaryOf(checkpoint(SUMMARY_MAX_ITEMS + 1))).toBeNull();
  });
});

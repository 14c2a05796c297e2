/**
 * The promises every scenario that disturbs the demo agents' runs (kills of
 * runners, workers or Python agents, stop requests) checks once a task is
 * done, in one place: no done step executed again, no corrupt checkpoint, the
 * summariser's index published exactly once (by idempotency key, as the fake
 * publish service counts it), and the same final results as an undisturbed
 * run. Each scenario adds its own checks to the list.
 */
import type { FakePublishService } from '../../fakes/fake-publish-service.js';
import { corruptionOf, doneStepsRunAgain, finalResults } from './task-audit.js';
import type { Tally } from './scenario.js';

/** The checks of a disturbed run, in the order reports list them. */
export const DISTURBED_RUN_CHECKS = [
  'done step executed again',
  'side effect performed more than once',
  'side effect never performed',
  'corrupt or unreadable checkpoint',
  'final result differs from an uncrashed run',
  'task never finished',
  'unclear refusal',
] as const;

/** What a done task is held to. */
export interface FinishedTaskExpectation {
  /** finalResults of the undisturbed run of the same agent. */
  reference: string;
  /** The idempotency key of the one effect the agent must perform exactly once, and the service that counts it; null: none. */
  effect: { service: FakePublishService; key: string } | null;
}

/** Count a corrupt or unreadable checkpoint of `taskId` (after a kill, or at the end), if there is one. */
export async function checkNotCorrupt(tally: Tally, location: string, taskId: string, where: string): Promise<void> {
  const corrupt = await corruptionOf(location, taskId);
  if (corrupt) tally.violation('corrupt or unreadable checkpoint', `${where}: ${corrupt}`);
}

/**
 * Check a task that reached done against every promise of a disturbed run.
 *
 * An effect counts as performed each time its key was POSTed, deduplicated or
 * not: a repeat the service turned away is still a repeat the agent should not
 * have sent (its resume probes an uncertain effect instead).
 */
export async function checkFinishedTask(
  tally: Tally,
  location: string,
  taskId: string,
  where: string,
  expected: FinishedTaskExpectation,
): Promise<void> {
  for (const v of await doneStepsRunAgain(location, taskId)) tally.violation('done step executed again', `${where}: ${v}`);
  await checkNotCorrupt(tally, location, taskId, `${where}, at the end`);
  if (expected.effect) {
    const { service, key } = expected.effect;
    const applied = service.applied.get(key) ?? 0;
    const performed = applied + (service.duplicates.get(key) ?? 0);
    if (performed > 1) tally.violation('side effect performed more than once', `${where}: ${key} was POSTed ${performed} times`);
    if (applied === 0) tally.violation('side effect never performed', `${where}: ${key} was never published`);
  }
  const result = await finalResults(location, taskId);
  if (result !== expected.reference)
    tally.violation('final result differs from an uncrashed run', `${where}: ${firstDifference(result, expected.reference)}`);
}

/** Where two results first differ, with some context on both sides. */
export function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at character ${i}: ${JSON.stringify(a.slice(Math.max(0, i - 60), i + 60))} vs ${JSON.stringify(b.slice(Math.max(0, i - 60), i + 60))}`;
}

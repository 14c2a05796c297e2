/**
 * Which steps a person edited: a human edit is recorded on the version it
 * wrote (its source names the step), so the plan of any later version can say
 * that a step's result came from a person rather than from the agent.
 */
import type { Checkpoint, VersionSource } from '../../../shared/checkpoint/schema.js';

export interface StepEdit {
  version: number;
  actor: string | null;
  at: string;
}

/** The last human edit of each step up to `cp`'s version, from the version list and from `cp` itself. */
export function stepEdits(
  cp: Checkpoint,
  history: readonly { version: number; source: VersionSource; updated_at: string }[],
): Map<string, StepEdit> {
  const edits = new Map<string, StepEdit>();
  const note = (version: number, source: VersionSource, at: string) => {
    if (source.kind !== 'human-edit' || !source.edit?.step_id || version > cp.version) return;
    const known = edits.get(source.edit.step_id);
    if (!known || known.version < version) edits.set(source.edit.step_id, { version, actor: source.actor ?? null, at });
  };
  for (const v of history) note(v.version, v.source, v.updated_at);
  note(cp.version, cp.source, cp.run.updated_at);
  return edits;
}

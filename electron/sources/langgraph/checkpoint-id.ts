/**
 * New checkpoint ids, made the way LangGraph makes them: UUID version 6 (time
 * first, so ids sort in the order they were taken) with the step as the
 * clock sequence, and a random node.
 */
import { randomBytes } from 'node:crypto';

const UUID_EPOCH_OFFSET_MS = 12_219_292_800_000n;

/** A version-6 UUID for `ms` (Unix milliseconds) and `step`, sorting after `after` when given. */
export function newCheckpointId(step: number, after: string | null, ms = Date.now()): string {
  for (let t = ms; ; t++) {
    const id = uuid6At(t, step);
    if (after === null || id > after) return id;
  }
}

function uuid6At(ms: number, step: number): string {
  const time = (BigInt(ms) + UUID_EPOCH_OFFSET_MS) * 10_000n;
  const hex = time.toString(16).padStart(15, '0');
  const clock = (0x8000 | (step & 0x3fff)).toString(16).padStart(4, '0');
  const node = randomBytes(6).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-6${hex.slice(12, 15)}-${clock}-${node}`;
}

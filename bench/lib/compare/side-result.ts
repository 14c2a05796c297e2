/**
 * What one store reports after replaying the agent workload, in the same
 * shape for every side of the comparison so tables and ratios are computed
 * by one piece of code.
 */
import type { DiskUsage } from '../dir-size.js';

export interface StepRange {
  /** First and last step (1-based, inclusive). */
  from: number;
  to: number;
}

export interface SaveTimes {
  early: StepRange;
  late: StepRange;
  /** Milliseconds per save, in step order. */
  earlyMs: number[];
  lateMs: number[];
  /** Every save, when every step was run; null for a sampled run. */
  allMs: number[] | null;
}

export interface ReadTiming {
  /** What the read returns, in words, for the report. */
  what: string;
  /** Milliseconds of each repetition; the report quotes the median. */
  ms: number[];
  /** Messages in the state that was read: checks both sides read the same thing. */
  messages: number;
  /** Content of the newest message read, for the same check. */
  lastMessage: string;
}

export interface StorageFigure {
  /** Bytes the store occupies after N steps (sum of file lengths, or serialized bytes held in memory). */
  bytes: number;
  /** Blocks actually allocated on disk, when the store is on disk. */
  allocatedBytes: number | null;
  /** True when `bytes` was computed from a model rather than measured (sampled runs). */
  projected: boolean;
  /** How the figure was obtained, in one line. */
  method: string;
  /** Files behind it, when measured on disk. */
  usage: DiskUsage | null;
}

export interface SideResult {
  side: string;
  steps: number;
  /** Whether only some steps were run (see `sampling`). */
  sampled: boolean;
  sampling: string | null;
  durability: string;
  saves: SaveTimes;
  storage: StorageFigure;
  reads: {
    latest: ReadTiming;
    middle: ReadTiming;
    /** Extra reads a side offers (Waystation: the hot snapshot without history). */
    [name: string]: ReadTiming;
  };
  /** Wall time of the whole side, for planning runs. */
  wallMs: number;
}

/** Steps timed as early and late: the first and last tenth, at most 100 and at least 1 each. */
export function timedRanges(steps: number): { early: StepRange; late: StepRange } {
  const count = Math.max(1, Math.min(100, Math.floor(steps / 10)));
  return { early: { from: 1, to: count }, late: { from: steps - count + 1, to: steps } };
}

/** The step whose checkpoint counts as "the middle of the history". */
export function middleStep(steps: number): number {
  return Math.max(1, Math.floor(steps / 2));
}

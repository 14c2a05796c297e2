/**
 * Wall-clock timing on the monotonic high-resolution clock.
 *
 * process.hrtime.bigint() is immune to clock adjustments, which matters for
 * runs that take minutes; everything is reported in milliseconds as floats.
 */

/** Nanoseconds on the monotonic clock. */
export function nowNs(): bigint {
  return process.hrtime.bigint();
}

/** Milliseconds elapsed since `startNs` (from nowNs). */
export function msSince(startNs: bigint): number {
  return Number(process.hrtime.bigint() - startNs) / 1e6;
}

/**
 * Run `fn` once and return its result with the milliseconds it took.
 *
 * Await-inclusive: the time covers everything up to the returned promise
 * settling, which is what a caller of an async store waits for.
 */
export async function timeAsync<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = nowNs();
  const result = await fn();
  return { result, ms: msSince(start) };
}

/**
 * Run `fn` `runs` times in a row and return every duration with the last result.
 *
 * Single reads are noisy (page cache, JIT warm-up); callers report the median
 * of the durations and keep the list for the JSON results.
 */
export async function timeRepeated<T>(runs: number, fn: () => Promise<T>): Promise<{ result: T; ms: number[] }> {
  if (runs < 1) throw new Error(`timeRepeated needs at least one run, got ${runs}`);
  const ms: number[] = [];
  let result!: T;
  for (let i = 0; i < runs; i++) {
    const timed = await timeAsync(fn);
    ms.push(timed.ms);
    result = timed.result;
  }
  return { result, ms };
}

/**
 * Percentiles and summaries of timing samples.
 *
 * Nearest-rank percentiles: the reported value is always one that was
 * measured, never an interpolation between two, so a p99 over 100 samples is
 * the 99th slowest of them and can be checked against the raw list.
 */

/** What a list of samples looks like, in the samples' own unit. */
export interface SampleSummary {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * The p-th percentile of `samples` by the nearest-rank method.
 *
 * `p` is in (0, 100]. The input is not modified. Throws on an empty list,
 * because a percentile of nothing would silently print as 0 in a table.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('percentile of an empty sample list: the run recorded no samples');
  if (!(p > 0 && p <= 100)) throw new Error(`percentile must be in (0, 100], got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1];
}

/**
 * Count, min, p50, p90, p99, max and mean of `samples`.
 *
 * Sorts once, so summarising thousands of samples stays cheap.
 */
export function summarize(samples: readonly number[]): SampleSummary {
  if (samples.length === 0) throw new Error('summary of an empty sample list: the run recorded no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.ceil((p / 100) * sorted.length) - 1];
  let total = 0;
  for (const s of sorted) total += s;
  return {
    count: sorted.length,
    min: sorted[0],
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: sorted[sorted.length - 1],
    mean: total / sorted.length,
  };
}

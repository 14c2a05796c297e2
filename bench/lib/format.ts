/**
 * Number formatting for benchmark tables: fixed, unit-explicit, and stable
 * across locales so reports diff cleanly between runs.
 */

/** Bytes with a binary unit: `812 B`, `3.4 KiB`, `12.1 MiB`, `48.0 GiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Milliseconds with three significant digits: `0.412 ms`, `12.3 ms`, `1,234 ms`. */
export function formatMs(ms: number): string {
  if (ms >= 1000) return `${Math.round(ms).toLocaleString('en-US')} ms`;
  return `${Number(ms.toPrecision(3))} ms`;
}

/** A ratio as `12.3x`; two decimals below 10 so `0.95x` and `1.05x` stay apart. */
export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return 'n/a';
  return ratio >= 10 ? `${ratio.toFixed(1)}x` : `${ratio.toFixed(2)}x`;
}

/** An integer with thousands separators: `10,000`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

import { describe, expect, it } from 'vitest';
import { formatBytes, formatRatio } from '../../../bench/lib/format.js';
import { formatTable } from '../../../bench/lib/table.js';

describe('formatTable', () => {
  it('prints a Markdown table whose lines all have the same width and column count', () => {
    const table = formatTable(
      [{ header: 'figure' }, { header: 'value', align: 'right' }],
      [['save p50', '0.41 ms'], ['a|b', '12,345 ms'], ['short']],
    );
    const lines = table.split('\n');
    expect(lines).toHaveLength(5);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
    // An escaped pipe inside a cell does not add a column.
    for (const line of lines) expect(line.split(/(?<!\\)\|/).length).toBe(4);
    expect(lines[1]).toMatch(/^\| -+ \| -+: \|$/);
    expect(lines[3]).toContain('a\\|b');
  });

  it('refuses a row with more cells than columns', () => {
    expect(() => formatTable([{ header: 'one' }], [['a', 'b']])).toThrow(/2 cells for 1 columns/);
  });
});

describe('formatBytes and formatRatio', () => {
  it('scales bytes by powers of 1024', () => {
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024 * 1.5)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.0 GiB');
  });

  it('keeps ratios near 1 apart and says n/a for a division by zero', () => {
    expect(formatRatio(0.951)).not.toBe(formatRatio(1.049));
    expect(formatRatio(Number.POSITIVE_INFINITY)).toBe('n/a');
  });
});

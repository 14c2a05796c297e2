/**
 * Plain-text tables that are also Markdown: what the terminal prints can be
 * pasted into docs/BENCHMARKS.md unchanged.
 */

export type Align = 'left' | 'right';

export interface Column {
  header: string;
  align?: Align;
}

/**
 * A Markdown table with padded cells, one row per line.
 *
 * Rows shorter than the header are padded with empty cells; longer rows are
 * an error, since a silently dropped figure is worse than a crash.
 */
export function formatTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  for (const [i, row] of rows.entries()) {
    if (row.length > columns.length) throw new Error(`table row ${i} has ${row.length} cells for ${columns.length} columns`);
  }
  const cells = rows.map((row) => columns.map((_, i) => escapeCell(row[i] ?? '')));
  const widths = columns.map((c, i) => Math.max(3, c.header.length, ...cells.map((r) => r[i].length)));
  const pad = (text: string, i: number) => (columns[i].align === 'right' ? text.padStart(widths[i]) : text.padEnd(widths[i]));
  const line = (parts: string[]) => `| ${parts.join(' | ')} |`;
  const rule = columns.map((c, i) => (c.align === 'right' ? `${'-'.repeat(widths[i] - 1)}:` : '-'.repeat(widths[i])));
  return [line(columns.map((c, i) => pad(c.header, i))), line(rule), ...cells.map((r) => line(r.map(pad)))].join('\n');
}

// A pipe inside a cell would split it into two columns in Markdown.
function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|');
}

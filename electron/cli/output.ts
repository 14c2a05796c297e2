/**
 * How the CLI writes: colour only for a person at a terminal, plain text when
 * piped or asked (NO_COLOR), aligned tables, and short renderings of sizes,
 * durations, hashes and problems.
 */
import { createRequire } from 'node:module';
import type { Problem } from '../../shared/checkpoint/problem.js';

// Styling is its own module, so `waystation --version` styles its errors without loading the width tables.
export { createStyle, shouldColor, type Style } from './style.js';
import type { Style } from './style.js';

// Built from a string: a literal ESC in a regex literal reads as a mistake to linters and people alike.
const ANSI = new RegExp(String.fromCharCode(27) + '\\[[0-9;]*m', 'g');

export function stripAnsi(s: string): string {
  return s.replace(ANSI, '');
}

/**
 * Columns a string takes in a terminal.
 *
 * Colour codes take none, East Asian wide characters (the articles' Chinese
 * step names) and emoji two, combining marks and zero-width joiners none:
 * string-width follows Unicode's East Asian Width and emoji data, which a
 * hand-kept list of ranges does not keep up with.
 */
export function displayWidth(s: string): number {
  const plain = stripAnsi(s);
  // Printable ASCII (most of what the CLI prints) is one column a character, as string-width would say.
  if (PRINTABLE_ASCII.test(plain)) return plain.length;
  widthOf ??= (createRequire(import.meta.url)('string-width') as { default: (s: string) => number }).default;
  return widthOf(s);
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/**
 * string-width, loaded the first time a string needs it: building its Unicode
 * tables costs more than the rest of `waystation ls` on an empty directory.
 * It is an ES module, which `require` loads on the Node versions this package
 * supports (20.19 and later).
 */
let widthOf: ((s: string) => number) | undefined;

/** Grapheme clusters, for cutting text; made on first use (ICU's segmenter is not free to build). */
let graphemes: Intl.Segmenter | undefined;

/**
 * Cut plain text (no colour codes) to at most `max` columns, ending in `…` when cut.
 *
 * Cuts between grapheme clusters, so a wide character, an emoji sequence or a
 * letter with its combining marks is kept whole or left out whole.
 */
export function truncateToWidth(text: string, max: number): string {
  if (displayWidth(text) <= max) return text;
  if (max < 1) return '';
  let out = '';
  let width = 0;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of graphemes.segment(text)) {
    const w = displayWidth(segment);
    if (width + w > max - 1) break;
    out += segment;
    width += w;
  }
  return `${out}…`;
}

/**
 * A value on one line of at most `max` columns: a string as its text (runs
 * of white space, line breaks included, read as one space), anything else as
 * compact JSON; cut with an ellipsis when longer.
 */
export function previewValue(value: unknown, max: number): string {
  if (typeof value === 'string')
    return value.trim() === '' ? JSON.stringify(value) : truncateToWidth(value.replace(/\s+/g, ' ').trim(), max);
  return truncateToWidth(value === undefined ? 'undefined' : JSON.stringify(value), max);
}

function padEnd(s: string, width: number): string {
  return s + ' '.repeat(Math.max(0, width - displayWidth(s)));
}

/** Left-aligned columns separated by two spaces; the header, when given, is dimmed by the caller's style. */
export function table(rows: readonly (readonly string[])[], header?: readonly string[], style?: Style): string {
  const all = header ? [header, ...rows] : rows;
  // Loops, not Math.max(...): spread into arguments, some 130,000 rows (the versions of a long task) overflow the stack.
  const widths: number[] = [];
  for (const r of all) r.forEach((cell, c) => (widths[c] = Math.max(widths[c] ?? 0, displayWidth(cell))));
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : padEnd(cell, widths[c])))
      .join('  ')
      .trimEnd();
  const out = rows.map(line);
  if (header) out.unshift(style ? style.dim(line(header)) : line(header));
  return out.join('\n') + '\n';
}

/** Colour a status word by what it asks of the reader: green settled, yellow attention, red broken. */
export function colorStatus(style: Style, status: string): string {
  switch (status) {
    case 'done':
    case 'ok':
    case 'running':
      return style.green(status);
    case 'skipped':
    case 'pending':
    case 'not_started':
      return style.dim(status);
    case 'waiting_approval':
    case 'waiting_human':
    case 'interrupted':
    case 'halted':
    case 'intent':
    case 'uncertain':
    case 'missing':
    case 'modified':
      return style.yellow(status);
    case 'failed':
    case 'drifted':
    case 'unreadable':
    case 'outside-root':
      return style.red(status);
    default:
      return status;
  }
}

export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${Math.round(abs)} ms`;
  const s = abs / 1000;
  if (s < 60) return `${sign}${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${sign}${m} min ${Math.round(s % 60)} s`;
  return `${sign}${Math.floor(m / 60)} h ${m % 60} min`;
}

export function formatCost(usd: number): string {
  const sign = usd < 0 ? '-' : '';
  return `${sign}$${Math.abs(usd).toFixed(4)}`;
}

/** A number with an explicit sign, for deltas. */
export function signed(n: number, render: (n: number) => string = String): string {
  return n > 0 ? `+${render(n)}` : render(n);
}

export function shortSha(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 12) : '-';
}

/** One line per problem: `✗ file: message (reason)`, errors red, warnings yellow. */
export function formatProblem(style: Style, p: Problem): string {
  const mark = p.severity === 'error' ? style.red('✗') : style.yellow('!');
  return `${mark} ${p.file}: ${p.message} ${style.dim(`(${p.reason})`)}`;
}

/** A JSON value on one line, cut to `max` columns with an ellipsis. */
export function inlineJson(value: unknown, max = 80): string {
  return truncateToWidth(value === undefined ? 'undefined' : JSON.stringify(value), max);
}

/**
 * Colour for the CLI: SGR codes for a person at a terminal, nothing when
 * piped or asked (NO_COLOR). Kept apart from output.ts, which measures and
 * lays out text, so a command that only styles a line loads no more.
 */

export interface Style {
  readonly enabled: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  blue(s: string): string;
  magenta(s: string): string;
  cyan(s: string): string;
}

const sgr = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;

/** Styling functions; all of them return their input untouched when `enabled` is false. */
export function createStyle(enabled: boolean): Style {
  const wrap = (open: number, close: number) => (enabled ? sgr(open, close) : (s: string) => s);
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    blue: wrap(34, 39),
    magenta: wrap(35, 39),
    cyan: wrap(36, 39),
  };
}

/**
 * Whether to colour a stream.
 *
 * Follows no-color.org (a non-empty NO_COLOR turns colour off) and the common
 * FORCE_COLOR override (non-empty and not "0" turns it on, for CI logs);
 * otherwise colour only a TTY whose TERM is not `dumb`.
 */
export function shouldColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

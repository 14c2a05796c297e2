/**
 * Text made safe to write to a terminal.
 *
 * Every C0 control character but a tab and a line break, and every escape
 * that is not one of the CLI's own colour codes, is shown as its Unicode
 * control picture (␀, ␛, ␍, ...). What a checkpoint holds (a task's name, a result, a
 * file's bytes in a problem) is shown, never obeyed: an escape sequence in a
 * downloaded directory must not move the cursor, clear the screen, retitle
 * the window or set the clipboard. JSON output holds none to change
 * (JSON.stringify escapes them); DEL, which JSON leaves as it is and a
 * terminal does nothing with, is left too. Its own module: every command's output goes
 * through it, `--version` included, which loads nothing else of the output.
 */

// Built from a string: a literal ESC in a regex literal reads as a mistake to linters and people alike.
const CONTROL = new RegExp(`${String.fromCharCode(27)}(?!\\[[0-9;]*m)|[\\u0000-\\u0008\\u000b-\\u001a\\u001c-\\u001f]`, 'g');

/** `s` with its control characters shown, not obeyed; see the module comment. */
export function terminalSafe(s: string): string {
  return s.replace(CONTROL, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0)));
}

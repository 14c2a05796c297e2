/** What the CLI writes is shown, never obeyed by the terminal: control characters and foreign escapes as pictures. */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { terminalSafe } from '../../../electron/cli/terminal-safe.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';
import { captureCli } from './capture-cli.js';

const ESC = String.fromCharCode(27);

it('keeps text, tabs, line breaks and colour codes, and shows every other control character as its picture', () => {
  expect(terminalSafe(`plain ü 中文\tcol\nline ${ESC}[31mred${ESC}[0m`)).toBe(`plain ü 中文\tcol\nline ${ESC}[31mred${ESC}[0m`);
  expect(terminalSafe(`a${ESC}]52;c;ZXZpbA==\u0007b`)).toBe('a␛]52;c;ZXZpbA==␇b');
  expect(terminalSafe(`${ESC}[2J${ESC}[H`)).toBe('␛[2J␛[H');
  expect(terminalSafe('nul\u0000 cr\r bs\b')).toBe('nul␀ cr␍ bs␈');
  // DEL is data JSON keeps as it is, and a terminal ignores: left alone, so --json output is never changed.
  const json = JSON.stringify({ s: 'a\u007f\u0000\u001b' });
  expect(terminalSafe(json)).toBe(json);
});

it('is how ls and show print a task whose name and goal carry escape sequences', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-terminal-safe-'));
  try {
    await openStore(dir).create(makeCheckpoint('evil', 2, { task_name: `name${ESC}]0;pwned\u0007`, goal: `goal${ESC}[2J` }));
    for (const args of [
      ['ls', dir],
      ['show', dir, 'evil'],
    ]) {
      const { out } = await captureCli(...args);
      expect(out).not.toMatch(new RegExp(`${ESC}(?!\\[[0-9;]*m)`));
      expect(out).toContain(args[0] === 'ls' ? 'name␛]0;pwned␇' : 'goal␛[2J');
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

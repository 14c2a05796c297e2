/**
 * What a command agent's code is, for the same rule as a module agent's
 * hash: the files its command names that lie inside the directory (the
 * script in `["python3", "demo.py"]`, never `python3` from PATH). A task
 * records their hash when it starts; a resume with other files says so and
 * puts it in the resume plan, so a confirm-mode task asks again, and a
 * directory's trust covers them like the modules it registers.
 *
 * Only the files the command names are hashed, not what they import: the
 * same as a module agent, whose hash is its module file's.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { resolveCommand } from './command-agent.js';

/** One file of a command: relative to the directory (with `/`), its real path, and its sha256. */
export interface CommandFile {
  file: string;
  path: string;
  sha256: string;
}

function inside(root: string, file: string): boolean {
  const rel = path.relative(root, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * The files of `command` that lie inside `root`, in the order the command
 * names them, each with its sha256: the arguments that resolve (as the runner
 * resolves them) to regular files whose real path is inside the directory's.
 */
export async function commandFiles(root: string, command: readonly string[]): Promise<CommandFile[]> {
  const realRoot = await fs.realpath(root).catch(() => path.resolve(root));
  const out: CommandFile[] = [];
  for (const part of resolveCommand(root, command)) {
    if (!path.isAbsolute(part)) continue;
    const real = await fs.realpath(part).catch(() => null);
    if (!real || !inside(realRoot, real) || out.some((f) => f.path === real)) continue;
    const stat = await fs.stat(real).catch(() => null);
    if (!stat?.isFile()) continue;
    const bytes = await fs.readFile(real).catch(() => null);
    if (!bytes) continue;
    out.push({
      file: path.relative(realRoot, real).split(path.sep).join('/'),
      path: real,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
  }
  return out;
}

/**
 * One hash of a command's files inside the directory (their paths and
 * contents), or null when the command names none there (a program on PATH
 * only): what a task records as `agent.command_sha256`.
 */
export async function hashCommand(root: string, command: readonly string[]): Promise<string | null> {
  const files = await commandFiles(root, command);
  if (files.length === 0) return null;
  return createHash('sha256')
    .update(files.map((f) => `${f.file}\0${f.sha256}\n`).join(''))
    .digest('hex');
}

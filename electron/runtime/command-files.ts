/**
 * What a command agent's code is, for the same rule as a module agent's
 * hash: the files its command names that lie inside the directory (the
 * script in `["python3", "demo.py"]`, never `python3` from PATH). A task
 * records their hash when it starts; a resume with other files says so and
 * puts it in the resume plan, so a confirm-mode task asks again, and a
 * directory's trust covers them like the modules it registers.
 *
 * Only the files the command names are hashed, not what they import: the
 * same as a module agent, whose hash is its module file's. They are hashed in
 * bounded memory (code-file-hash.ts); one that cannot be (too large, a pipe
 * or device in a script's place, unreadable) is listed with its problem, and
 * a command with such a file is never started: its code could not be told
 * from other code.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ServiceError } from '../../shared/api/error-codes.js';
import { hashCodeFile, type CodeFileRefusal } from './code-file-hash.js';
import { resolveCommand } from './command-agent.js';

/**
 * One file of a command: relative to the directory (with `/`), its real path, and its sha256;
 * or, for a file that could not be hashed, null and why.
 */
export type CommandFile =
  | { file: string; path: string; sha256: string }
  | { file: string; path: string; sha256: null; reason: Exclude<CodeFileRefusal, 'missing'>; problem: string };

/** A command agent whose files inside the directory cannot all be hashed: it is not started. */
export class CommandFilesError extends ServiceError {
  readonly code = 'agent-unavailable';
}

function inside(root: string, file: string): boolean {
  const rel = path.relative(root, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * The files of `command` that lie inside `root`, in the order the command
 * names them, each with its sha256: the arguments that resolve (as the runner
 * resolves them) to something other than a folder whose real path is inside
 * the directory's. A missing file is an argument that names no file, and is
 * left out; a pipe, device or over-large file is listed with its problem.
 */
export async function commandFiles(root: string, command: readonly string[]): Promise<CommandFile[]> {
  const realRoot = await fs.realpath(root).catch(() => path.resolve(root));
  const out: CommandFile[] = [];
  for (const part of resolveCommand(root, command)) {
    if (!path.isAbsolute(part)) continue;
    const real = await fs.realpath(part).catch(() => null);
    if (!real || !inside(realRoot, real) || out.some((f) => f.path === real)) continue;
    const stat = await fs.stat(real).catch(() => null);
    if (!stat || stat.isDirectory()) continue;
    const file = path.relative(realRoot, real).split(path.sep).join('/');
    const hashed = await hashCodeFile(real);
    if (hashed.ok) out.push({ file, path: real, sha256: hashed.sha256 });
    else if (hashed.reason !== 'missing') out.push({ file, path: real, sha256: null, reason: hashed.reason, problem: hashed.problem });
  }
  return out;
}

/**
 * One hash of a command's files inside the directory (their paths and
 * contents), or null when the command names none there (a program on PATH
 * only): what a task records as `agent.command_sha256`.
 *
 * @throws CommandFilesError when a file cannot be hashed (see commandFiles), naming it.
 */
export async function hashCommand(root: string, command: readonly string[]): Promise<string | null> {
  const files = await commandFiles(root, command);
  if (files.length === 0) return null;
  const bad = files.find((f) => f.sha256 === null);
  if (bad?.sha256 === null) {
    throw new CommandFilesError(
      `the command (${command.join(' ')}) was not started: its file ${bad.problem.replace(bad.path, bad.file)}. Nothing was written`,
    );
  }
  return createHash('sha256')
    .update(files.map((f) => `${f.file}\0${f.sha256}\n`).join(''))
    .digest('hex');
}

/**
 * Agents in any language: a `waystation.config.json` entry that names a command
 * instead of a module,
 *
 * ```json
 * { "agents": [{ "name": "py-demo", "command": ["python3", "demo.py"], "description": "...", "options": { "type": "object" } }] }
 * ```
 *
 * is started as a process of its own, like a worker: the runner hands it the
 * directory and the task id as arguments (`<command...> DIR --task ID`) and the
 * rest of the job in the environment, a start's options in a file the
 * environment names (the protocol of python/waystation/cli.py,
 * documented in docs/WRITING-AGENTS.md), reads its output line by line for the
 * activity feed, and learns how the task ended from its exit code and the
 * checkpoint it wrote. Nothing of it runs to list it: the name, description and
 * options schema come from the configuration. The command's program and any
 * argument that names a file (`./demo.py`, `demo.py`) resolve against the
 * directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { AgentRef } from '../../shared/checkpoint/schema.js';
import type { WorkerJob } from './worker-protocol.js';
import { RUN_APART } from './worker-launch.js';

export const CommandAgentEntry = z.strictObject({
  /** The agent's name: the one its tasks record, and the one `waystation run DIR NAME` starts. */
  name: z.string().min(1, 'a command agent needs a name'),
  /** The program and its arguments; paths relative to the directory root. */
  command: z.array(z.string().min(1)).min(1, 'command must name a program'),
  description: z.string().optional(),
  /** JSON Schema of the agent's options, for the start form and for checking them before anything runs. */
  options: z.record(z.string(), z.unknown()).optional(),
});
export type CommandAgentEntry = z.infer<typeof CommandAgentEntry>;

/**
 * What a task started from a command agent records of it (never secrets: the command as registered), with
 * the hash of the command's files inside the directory (command-files.ts) when it names any.
 */
export function commandAgentRef(entry: CommandAgentEntry, commandSha256: string | null = null): Partial<AgentRef> & { name: string } {
  return { name: entry.name, command: entry.command, project_root: '.', ...(commandSha256 ? { command_sha256: commandSha256 } : {}) };
}

/**
 * The command with its file arguments resolved against the root: an argument
 * that exists as a file there (`demo.py`, `./agents/x.py`) becomes its absolute
 * path, so the agent runs the same whatever the host's working directory. The
 * program itself is looked up on PATH unless it is such a file.
 */
export function resolveCommand(root: string, command: readonly string[]): string[] {
  return command.map((part) => {
    if (path.isAbsolute(part) || part.startsWith('-')) return part;
    const candidate = path.resolve(root, part);
    return part.includes('/') || existsSync(candidate) ? candidate : part;
  });
}

/** The jobs a command agent is given: everything but `describe`, which its configuration entry answers. */
export type CommandJob = Exclude<WorkerJob, { kind: 'describe' }>;

/**
 * The environment a command agent is started with: the job, handed over as WAYSTATION_* variables.
 * `commandSha256` is the hash of its files now: a start records it, a resume compares it with the recorded one.
 */
export function commandJobEnv(
  entry: CommandAgentEntry,
  job: CommandJob,
  base: NodeJS.ProcessEnv,
  commandSha256: string | null = null,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...base,
    WAYSTATION_DIR: job.root,
    WAYSTATION_TASK_ID: job.taskId,
    WAYSTATION_AGENT_NAME: entry.name,
    WAYSTATION_AGENT_REF: JSON.stringify(commandAgentRef(entry, commandSha256)),
  };
  // Variables of an enclosing run (a command agent that starts another) must not leak into this job.
  for (const name of [
    'WAYSTATION_OPTIONS',
    OPTIONS_FILE_ENV,
    'WAYSTATION_MODE',
    'WAYSTATION_MAX_ATTEMPTS',
    'WAYSTATION_TRIGGER',
    'WAYSTATION_RESUME',
    'WAYSTATION_JOB',
    OPTIONS_CONFINED_ENV,
  ])
    delete env[name];
  if (job.actor) env.WAYSTATION_ACTOR = job.actor;
  if (job.kind === 'start') {
    env.WAYSTATION_ACTION = 'start';
    // Linux caps one environment string at 128 KiB (a larger one fails the spawn with E2BIG): options of any
    // size go in a file (spawnCommandAgent), and small ones in the variable too, for agents that read only it.
    const options = JSON.stringify(job.options ?? {});
    if (Buffer.byteLength(options, 'utf8') <= ENV_OPTIONS_BYTES) env.WAYSTATION_OPTIONS = options;
    if (job.mode) env.WAYSTATION_MODE = job.mode;
    if (job.maxAutoAttempts !== undefined) env.WAYSTATION_MAX_ATTEMPTS = String(job.maxAutoAttempts);
    if (job.confined) env[OPTIONS_CONFINED_ENV] = '1';
  } else if (job.kind === 'approve') {
    env.WAYSTATION_ACTION = 'approve';
  } else if (job.kind === 'resume') {
    env.WAYSTATION_ACTION = 'resume';
    env.WAYSTATION_TRIGGER = job.trigger ?? 'human';
    env.WAYSTATION_RESUME = JSON.stringify({
      rerun_drifted: Boolean(job.rerunDrifted),
      settle: job.settle ?? {},
      ...(job.note !== undefined ? { note: job.note } : {}),
    });
  }
  return env;
}

/**
 * Set ("1") when a start's options came from the inspector (a page, through the host), as AgentPlanEnv.confined
 * tells an agent of the runtime: paths in them must stay inside the checkpoint directory. The Python library hands
 * it to `resolve_options` as `env["confined"]` (python/README.md).
 */
export const OPTIONS_CONFINED_ENV = 'WAYSTATION_OPTIONS_CONFINED';

/** The variable naming the file that holds a start's options, as a JSON object. */
export const OPTIONS_FILE_ENV = 'WAYSTATION_OPTIONS_FILE';
/** Options up to this size are also given in WAYSTATION_OPTIONS: well under the 128 KiB one variable may hold. */
export const ENV_OPTIONS_BYTES = 64 * 1024;

/**
 * Start a command agent for a job, in the directory root, with its output
 * piped. A start's options are written to a file only the user can read, in
 * a private temporary folder (options can hold what a person typed), named by
 * WAYSTATION_OPTIONS_FILE and removed when the process ends.
 */
export function spawnCommandAgent(
  entry: CommandAgentEntry,
  job: CommandJob,
  env: NodeJS.ProcessEnv,
  commandSha256: string | null = null,
): ChildProcess {
  const [program, ...args] = resolveCommand(job.root, entry.command);
  const jobEnv = commandJobEnv(entry, job, env, commandSha256);
  let folder: string | null = null;
  if (job.kind === 'start') {
    folder = mkdtempSync(path.join(os.tmpdir(), 'waystation-options-'));
    const file = path.join(folder, 'options.json');
    writeFileSync(file, JSON.stringify(job.options ?? {}), { mode: 0o600 });
    jobEnv[OPTIONS_FILE_ENV] = file;
  }
  const child = spawn(program, [...args, job.root, '--task', job.taskId], {
    cwd: job.root,
    env: jobEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: RUN_APART,
  });
  if (folder) {
    const remove = () => rmSync(folder, { recursive: true, force: true });
    child.once('exit', remove);
    child.once('error', remove);
  }
  return child;
}

/** The error code a command agent's exit code stands for when it wrote nothing: 2 bad input, 6 busy. */
export function refusalOfExit(code: number | null): string | null {
  if (code === 2) return 'invalid';
  if (code === 6) return 'busy';
  return null;
}

/**
 * Whether a task's agent can be started again, decided without running any
 * of its code: a built-in is known or not; a module file exists or not, and
 * its hash matches the one recorded or not. Cheap enough for a task view to
 * ask whenever it shows a task; whether the module still *loads* is only
 * learnt by loading it (in a worker, at resume).
 */
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { builtInAgents } from './built-in-agents.js';
import { foreignAgentProblem, hashModule, moduleFileOf } from './agent-loader.js';
import { readAgentsConfig } from './agent-catalog.js';
import { hashCodeFile } from './code-file-hash.js';
import { CommandFilesError, hashCommand } from './command-files.js';

export interface AgentStatus {
  /**
   * `foreign`: the task names an agent that is neither built in nor a module
   * (another program wrote it, following docs/FORMAT.md); it is inspected,
   * never resumed from Waystation. `command`: a program registered in the
   * directory's waystation.config.json under the task's agent name.
   */
  kind: 'builtin' | 'module' | 'command' | 'foreign' | 'none';
  /** Whether a resume can find the agent. */
  available: boolean;
  /** The module file, for module agents. */
  file?: string;
  /** The module's hash differs from the recorded one: a resume reports it (and lists it in a confirm-mode plan). */
  module_changed?: boolean;
  /** Why the task cannot be resumed, or what a human should know before resuming. */
  problem?: string;
  /** Module agents: the hash the task recorded, and the file's hash now (absent when the file cannot be read); command agents: the hash of their files (command-files.ts). */
  recorded_sha256?: string;
  current_sha256?: string;
}

export interface AgentStatusOptions {
  /** Hash a module file (null when it cannot be read); a host that asks often passes a cached one. */
  hashModule?: (file: string) => Promise<string | null>;
}

/**
 * The state of a task's agent.
 *
 * @param root the checkpoint directory, against which a relative project root resolves.
 */
export async function agentStatus(root: string, cp: Checkpoint, opts: AgentStatusOptions = {}): Promise<AgentStatus> {
  const ref = cp.agent;
  if (!ref)
    return { kind: 'none', available: false, problem: 'the task does not record which agent runs it: it can be inspected, not resumed' };
  const file = moduleFileOf(ref, root);
  if (!file) {
    if (builtInAgents().has(ref.name)) return { kind: 'builtin', available: true };
    // A command agent is found by its name in the directory's configuration, which is read, never run.
    const config = await readAgentsConfig(root);
    const entry = config.commands.find((c) => c.name === ref.name);
    if (entry) return commandStatus(root, ref.command_sha256, entry.command);
    if ((ref as { command?: unknown }).command !== undefined)
      return {
        kind: 'command',
        available: false,
        problem: `the task was run by the command agent "${ref.name}", which ${config.file} no longer registers${config.problem ? ` (${config.problem})` : ''}; register it again to resume the task`,
      };
    return { kind: 'foreign', available: false, problem: foreignAgentProblem(ref.name) };
  }
  const sha = await (opts.hashModule ?? hashModule)(file);
  const recorded = ref.module_sha256 ? { recorded_sha256: ref.module_sha256 } : {};
  if (sha === null) {
    // Only on this path: why there is no hash (opening and a stat, no read for a file too large, a pipe or a device).
    const why = await hashCodeFile(file);
    return {
      kind: 'module',
      available: false,
      file,
      ...recorded,
      problem:
        why.ok || why.reason === 'missing'
          ? `the agent module ${file} cannot be found (moved or deleted?); restore it to resume the task`
          : `the agent module ${why.problem}; the task cannot be resumed until it is a readable module file`,
    };
  }
  if (ref.module_sha256 && ref.module_sha256 !== sha) {
    return {
      kind: 'module',
      available: true,
      file,
      module_changed: true,
      ...recorded,
      current_sha256: sha,
      problem: `the agent module ${ref.module} changed since the task recorded it; resuming runs the new code`,
    };
  }
  return { kind: 'module', available: true, file, module_changed: false, ...recorded, current_sha256: sha };
}

/** A registered command agent: available, and changed when the files its command names inside the directory differ from those the task recorded. */
async function commandStatus(root: string, recorded: string | undefined, command: readonly string[]): Promise<AgentStatus> {
  let current: string | null;
  try {
    current = await hashCommand(root, command);
  } catch (err) {
    if (err instanceof CommandFilesError) return { kind: 'command', available: false, problem: err.message };
    throw err;
  }
  if (!recorded) return { kind: 'command', available: true };
  if (current === recorded)
    return { kind: 'command', available: true, module_changed: false, recorded_sha256: recorded, current_sha256: current };
  return {
    kind: 'command',
    available: true,
    module_changed: true,
    recorded_sha256: recorded,
    ...(current ? { current_sha256: current } : {}),
    problem: `the files of the command agent (${command.join(' ')}) changed since the task recorded them; resuming runs the new code`,
  };
}

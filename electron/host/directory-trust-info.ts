/**
 * What the trust prompt shows for an open directory: whether it is trusted,
 * and what would run the moment it is: the agent modules and command agents
 * its waystation.config.json registers and the interrupted auto- and
 * confirm-mode tasks the host would resume. All of it is read from files;
 * nothing is imported or run to find it.
 */
import type { DirectoryTrust } from '../../shared/api/contract.js';
import { mayNeedRecovery, type TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { readAgentsConfig } from '../runtime/agent-catalog.js';
import { howToTrust, registeredCode, type TrustGate } from '../runtime/directory-trust.js';

/** Describe a directory's trust for the prompt (see the module comment). */
export async function describeDirectoryTrust(
  root: string,
  gate: TrustGate,
  tasks: readonly TaskSummary[],
  opts: { canTrust: boolean },
): Promise<DirectoryTrust> {
  const [state, code, config] = await Promise.all([
    gate.state ? gate.state(root) : gate.isTrusted(root).then((trusted) => ({ trusted, changed: false })),
    registeredCode(root),
    readAgentsConfig(root),
  ]);
  const agents = code.agents.map((a) => ({ name: a.name, module: a.module, ...(a.export ? { export: a.export } : {}) }));
  const commands = config.commands.map((c) => ({ name: c.name, command: c.command }));
  const resumes = tasks.filter((t) => mayNeedRecovery(t)).map((t) => t.task_id);
  const would = [
    agents.length
      ? `loads ${agents.length === 1 ? 'the agent module' : 'the agent modules'} ${agents.map((a) => a.module).join(', ')}`
      : '',
    commands.length
      ? `lets ${commands.length === 1 ? 'the command agent' : 'the command agents'} ${commands.map(commandLine).join(', ')} run`
      : '',
    resumes.length ? `resumes ${resumes.length === 1 ? 'the interrupted task' : 'the interrupted tasks'} ${resumes.join(', ')}` : '',
  ].filter(Boolean);
  const whatRuns = would.length
    ? `trusting it ${would.join(' and ')}`
    : 'trusting it lets its tasks be started, resumed, approved, rejected and edited';
  let message: string;
  if (state.trusted) message = `${root} is trusted`;
  else if (!opts.canTrust) message = `${root} is browsed read-only: this host was started without running tasks`;
  else
    message =
      `${root} is not trusted${state.changed ? ' (its waystation.config.json, a registered module or a command agent script changed since it was trusted)' : ''}: ` +
      `it is browsed read-only, nothing in it is run; ${whatRuns}. To run it, ${howToTrust(root)}`;
  return {
    root,
    trusted: state.trusted,
    can_trust: opts.canTrust,
    changed: state.changed,
    agents,
    commands,
    config_problem: code.problem,
    resumes,
    message,
  };
}

/** A command agent as the prompt names it: its name and the command it runs. */
export function commandLine(c: { name: string; command: readonly string[] }): string {
  return `"${c.name}" (${c.command.join(' ')})`;
}

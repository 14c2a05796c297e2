/**
 * Directory trust on the command line: a command that would run code from a
 * checkpoint directory (run, resume, approve, serve) runs it only in a
 * directory a person trusts (directory-trust.ts). `--trust` trusts it; on a
 * terminal, the command asks; otherwise it is refused, saying why and how.
 *
 * A directory that holds nothing yet (absent or empty) holds no code: it is
 * trusted as Waystation fills it, so a task started there can be resumed
 * there later.
 */
import { promises as fs } from 'node:fs';
import type { Command } from 'commander';
import { optionsJsonSchema } from '../../shared/api/options-json-schema.js';
import { builtInAgents } from '../agents/registry.js';
import { AGENTS_CONFIG_FILE, readAgentsConfig, type AgentCatalog } from '../runtime/agent-catalog.js';
import { registeredCode, trustDirectory, trustFilePath, trustState } from '../runtime/directory-trust.js';
import { UsageError, type CliContext } from './cli-context.js';

/** The `--trust` option of the commands that run code. */
export function addTrustOption(command: Command): Command {
  return command.option(
    '--trust',
    `trust DIR: run its code (the agent modules its ${AGENTS_CONFIG_FILE} registers, its tasks); remembered until that file or a module changes`,
  );
}

async function holdsNothing(root: string): Promise<boolean> {
  const names = await fs.readdir(root).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : null));
  return names !== null && names.length === 0;
}

/**
 * The catalog of an untrusted directory: the built-in agents, and the
 * registered ones as its configuration writes them, none imported.
 */
export async function unloadedCatalog(root: string): Promise<AgentCatalog> {
  const code = await registeredCode(root);
  const builtIn = [...builtInAgents.values()].map((agent) => ({
    name: agent.name,
    description: agent.description,
    options_schema: optionsJsonSchema(agent.options),
    origin: 'builtin' as const,
  }));
  if (code.problem) {
    return {
      agents: [
        ...builtIn,
        {
          name: AGENTS_CONFIG_FILE,
          description: 'the agents registered for this directory',
          options_schema: {},
          origin: 'registered',
          problem: code.problem,
        },
      ],
      config_problem: code.problem,
    };
  }
  const registered = code.agents.map((a) => ({
    name: a.name,
    description: `not loaded: ${root} is not trusted, so its modules are not imported (add --trust to load them)`,
    options_schema: {},
    origin: 'registered' as const,
    module: a.module,
    ...(a.export ? { export: a.export } : {}),
  }));
  // A command agent is listed as registered: naming it runs nothing.
  const commands = (await readAgentsConfig(root)).commands.map((entry) => ({
    name: entry.name,
    description: `not run: ${root} is not trusted, so its commands are not started (add --trust to run them)`,
    options_schema: {},
    origin: 'registered' as const,
    command: entry.command,
  }));
  return { agents: [...builtIn, ...registered, ...commands], config_problem: null };
}

/** Trust a directory that holds nothing yet (absent or empty): what Waystation then writes there is the person's own. */
export async function trustIfEmpty(root: string): Promise<void> {
  if (await holdsNothing(root)) await trustDirectory(root);
}

/** What trusting a directory lets run, in a line or two, read without importing anything. */
export async function whatWouldRun(root: string, extra: readonly string[] = []): Promise<string[]> {
  const [code, config] = await Promise.all([registeredCode(root), readAgentsConfig(root)]);
  const lines = code.agents.map((a) => `  agent module ${a.module}${a.export ? ` (export ${a.export})` : ''}, registered as "${a.name}"`);
  for (const c of config.commands) lines.push(`  command agent "${c.name}": ${c.command.join(' ')}`);
  if (code.problem) lines.push(`  (${code.problem})`);
  return [...lines, ...extra.map((e) => `  ${e}`)];
}

/**
 * Make sure a person trusts `root` before `command` runs its code; throws a
 * usage error saying why and how otherwise. `extra` names more of what would
 * run (the task to resume).
 */
export async function requireTrust(
  ctx: CliContext,
  root: string,
  opts: { trust?: boolean; command: string; extra?: readonly string[] },
): Promise<void> {
  const state = await trustState(root);
  if (state.trusted) return;
  if (opts.trust || (!state.changed && (await holdsNothing(root)))) {
    await trustDirectory(root);
    if (opts.trust) ctx.io.err(ctx.errStyle.dim(`trusted ${state.root} (remembered in ${trustFilePath()})\n`));
    return;
  }
  const would = await whatWouldRun(state.root, opts.extra);
  const why =
    `${state.root} is not trusted${state.changed ? ` (its ${AGENTS_CONFIG_FILE}, a registered module or a command agent script changed since it was trusted)` : ''}` +
    `: \`waystation ${opts.command}\` would run code from it`;
  if (ctx.io.ask) {
    ctx.io.err(`${why}:\n${would.length ? would.join('\n') : '  its tasks and agents'}\n`);
    const answer = (await ctx.io.ask(`Trust ${state.root} and run it? [y/N] `)).trim().toLowerCase();
    if (answer === 'y' || answer === 'yes') {
      await trustDirectory(root);
      return;
    }
    throw new UsageError(`${state.root} was not trusted; nothing was run`);
  }
  throw new UsageError(
    `${why}${would.length ? ` (${would.map((l) => l.trim()).join('; ')})` : ''}; nothing was run. ` +
      `Add --trust to trust it (remembered until its ${AGENTS_CONFIG_FILE}, a registered module or a command agent script changes), ` +
      'or inspect it first: waystation ls, show and agents run nothing',
  );
}

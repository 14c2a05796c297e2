/**
 * `waystation agents DIR`: the agents a checkpoint directory can start, the
 * built-in ones and those its waystation.config.json registers, with any that
 * cannot be started and why. A registered module is imported (in a worker
 * process, to learn its name and options) only in a trusted directory; in an
 * untrusted one the registrations are listed as written, nothing imported.
 */
import type { Command } from 'commander';
import { listAvailableAgents } from '../../runtime/agent-catalog.js';
import { isTrusted } from '../../runtime/directory-trust.js';
import { ExitCode, requireLocation, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { addTrustOption, requireTrust, unloadedCatalog } from '../trust-check.js';
import { formatJson, table } from '../output.js';
// Provides the built-in agents to the runtime this command drives (see runtime/built-in-agents.ts).
import '../../agents/registry.js';

export function register(program: Command, ctx: CliContext): void {
  const command = program
    .command('agents')
    .description('list the agents a directory can start: built-in and registered in DIR/waystation.config.json')
    .argument('<DIR>', STORE_ARGUMENT)
    .option('--json', 'print {agents, config_problem} as JSON')
    .addHelpText(
      'after',
      '\nRegistered modules are imported (in a worker process) only when DIR is trusted (--trust); otherwise they are listed as\n' +
        'waystation.config.json writes them, without importing anything.\n' +
        '\nExit status: 0 when every agent can be started, 1 when the configuration or a registered agent has a problem.',
    );
  addTrustOption(command).action(async (dir: string, opts: { json?: boolean; trust?: boolean }) => {
    // A database names no folder: its agents are those of the folder the command runs in.
    const root = ctx.openStore(await requireLocation(dir)).artifactRoot;
    if (opts.trust) await requireTrust(ctx, root, { trust: true, command: 'agents' });
    const catalog = (await isTrusted(root)) ? await listAvailableAgents(root) : await unloadedCatalog(root);
    if (opts.json) {
      ctx.io.out(formatJson(catalog));
    } else {
      const s = ctx.style;
      const rows = catalog.agents.map((a) => [
        s.bold(a.name),
        a.origin,
        a.module ?? a.command?.join(' ') ?? '-',
        a.problem ? s.red(a.problem) : a.description,
      ]);
      ctx.io.out(`${table(rows, ['AGENT', 'ORIGIN', 'MODULE OR COMMAND', 'DESCRIPTION'], s).trimEnd()}\n`);
    }
    if (catalog.agents.some((a) => a.problem)) ctx.fail(ExitCode.problems);
  });
}

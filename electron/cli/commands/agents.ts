/**
 * `waystation agents DIR`: the agents a checkpoint directory can start, the
 * built-in ones and those its waystation.config.json registers (each loaded
 * in a worker process to learn its name), with any that cannot be started
 * and why.
 */
import type { Command } from 'commander';
import { listAvailableAgents } from '../../runtime/agent-catalog.js';
import { ExitCode, requireLocation, type CliContext } from '../cli-context.js';
import { formatJson, table } from '../output.js';
// Provides the built-in agents to the runtime this command drives (see runtime/built-in-agents.ts).
import '../../agents/registry.js';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('agents')
    .description('list the agents a directory can start: built-in and registered in DIR/waystation.config.json')
    .argument('<DIR>', 'the checkpoint directory')
    .option('--json', 'print {agents, config_problem} as JSON')
    .addHelpText('after', '\nExit status: 0 when every agent can be started, 1 when the configuration or a registered agent has a problem.')
    .action(async (dir: string, opts: { json?: boolean }) => {
      // A database names no folder: its agents are those of the folder the command runs in.
      const root = ctx.openStore(await requireLocation(dir)).artifactRoot;
      const catalog = await listAvailableAgents(root);
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

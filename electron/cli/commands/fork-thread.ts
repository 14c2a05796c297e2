/**
 * `waystation fork-thread SOURCE THREAD --checkpoint ID --values JSON --write`:
 * the one write to a LangGraph checkpointer. A new checkpoint on THREAD,
 * forked from checkpoint ID with the channels in JSON set to new values, as
 * LangGraph's updateState writes one (see fork-writer.ts). Without --write it
 * only says what it would write.
 */
import type { Command } from 'commander';
import { openLangGraphSource } from '../../sources/langgraph/open-langgraph.js';
import { ForkRefused, planFork, writeFork } from '../../sources/langgraph/fork-writer.js';
import { UnwritableValue } from '../../sources/langgraph/state-encoding.js';
import { ExitCode, UsageError, type CliContext } from '../cli-context.js';
import { formatJson, inlineJson } from '../output.js';

function parseValues(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--values is not JSON (${err instanceof Error ? err.message : String(err)}); nothing was written`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(
      '--values must be a JSON object of channel names to their new values, e.g. {"draft": "Hello"}; nothing was written',
    );
  }
  return parsed as Record<string, unknown>;
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('fork-thread')
    .description(
      "write a new checkpoint on a LangGraph thread, forked from one of its checkpoints with new channel values, as LangGraph's updateState does",
    )
    .argument('<SOURCE>', 'the LangGraph checkpointer: a SQLite file or a postgres:// URL')
    .argument('<THREAD>', 'the thread (its task id, as `waystation ls SOURCE` lists it)')
    .requiredOption('--checkpoint <ID>', 'the checkpoint to fork from: its id, or its version number')
    .requiredOption('--values <JSON>', 'the new values, a JSON object: channel name -> value (messages as {"role": ..., "content": ...})')
    .option('--write', 'write the checkpoint; without it, only say what would be written')
    .option('--json', 'print the plan (and whether it was written) as JSON')
    .addHelpText(
      'after',
      '\nExisting rows are never changed: the new checkpoint (and, in PostgreSQL, its channel blobs) is inserted in one transaction.' +
        '\nInvoking the graph on the thread afterwards carries on from the new checkpoint.' +
        '\nExit status: 0 when planned (or written, with --write), 1 when refused, 2 for a usage error.',
    )
    .action(async (location: string, thread: string, opts: { checkpoint: string; values: string; write?: boolean; json?: boolean }) => {
      const values = parseValues(opts.values);
      const source = await openLangGraphSource(location).catch((err: Error) => {
        throw new UsageError(err.message);
      });
      ctx.atExit(() => source.close());
      let plan;
      try {
        plan = await planFork(source, thread, opts.checkpoint, values);
      } catch (err) {
        if (!(err instanceof ForkRefused || err instanceof UnwritableValue)) throw err;
        ctx.io.err(`${err.message}${err instanceof UnwritableValue ? '; nothing was written' : ''}\n`);
        return ctx.fail(ExitCode.problems);
      }
      if (opts.write) {
        try {
          await writeFork(source, plan);
        } catch (err) {
          if (!(err instanceof ForkRefused)) throw err;
          ctx.io.err(`${err.message}\n`);
          return ctx.fail(ExitCode.problems);
        }
      }
      const s = ctx.style;
      if (opts.json) {
        const { rows: _rows, ...shown } = plan;
        ctx.io.out(formatJson({ ...shown, written: opts.write === true }));
        return;
      }
      const lines = [
        `${opts.write ? 'Wrote' : 'Would write'} checkpoint ${s.bold(plan.checkpoint_id)} on thread ${s.bold(plan.thread_id)}`,
        `  parent     ${plan.parent.checkpoint_id} ${s.dim(`(version ${plan.parent.version})`)}`,
        `  metadata   source update, step ${plan.step} ${s.dim(`(${plan.serde} serde)`)}`,
        ...plan.channels.map((c) => `  channel    ${c.name}: version ${inlineJson(c.from)} → ${inlineJson(c.to)}`),
        opts.write
          ? s.dim('Invoking the graph on the thread now carries on from this checkpoint.')
          : s.yellow('Nothing was written: add --write to write it.'),
      ];
      ctx.io.out(lines.join('\n') + '\n');
    });
}

/**
 * `waystation edit DIR TASK STEP (--value JSON | --file PATH)`: replace a
 * step's result with a human's value. It must satisfy the step's output
 * schema; it is written as a new version (source human-edit, before and
 * after), and the next resume continues after that step; `--later keep` keeps the
 * steps after it as they are instead of rerunning them.
 */
import { promises as fs } from 'node:fs';
import type { Command } from 'commander';
import { requireTask, UsageError, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { cliRunner, OPERATION_EXIT_HELP, reportOutcome } from './run.js';

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `${where} is not JSON (${(err as Error).message}); a string value needs quotes: --value '"text"'. Nothing was written.`,
    );
  }
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('edit')
    .description("replace a step's result with a value (validated against the step's output schema)")
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .argument('<STEP>', 'the step id (or name)')
    .option('--value <JSON>', 'the new result, as JSON')
    .option('--file <PATH>', 'read the new result from a JSON file')
    .option(
      '--later <rerun|keep>',
      'the steps after it: rerun them (they were computed from the old value), or keep them as they are',
      'rerun',
    )
    .option('--by <NAME>', 'who edits (default: $USER)')
    .option('--json', 'print the outcome as JSON')
    .addHelpText('after', OPERATION_EXIT_HELP)
    .action(
      async (
        dir: string,
        taskId: string,
        step: string,
        opts: { value?: string; file?: string; later: string; by?: string; json?: boolean },
      ) => {
        if ((opts.value === undefined) === (opts.file === undefined))
          throw new UsageError('give exactly one of --value JSON or --file PATH');
        if (opts.later !== 'rerun' && opts.later !== 'keep') throw new UsageError(`--later is rerun or keep, not "${opts.later}"`);
        let value: unknown;
        if (opts.value !== undefined) value = parseJson(opts.value, '--value');
        else {
          const text = await fs.readFile(opts.file!, 'utf8').catch((err: Error) => {
            throw new UsageError(`cannot read ${opts.file}: ${err.message}`);
          });
          value = parseJson(text, opts.file!);
        }
        const { root } = await requireTask(ctx, dir, taskId);
        reportOutcome(ctx, dir, await cliRunner(ctx, root, opts.by).edit(taskId, step, value, { later: opts.later }), Boolean(opts.json));
      },
    );
}

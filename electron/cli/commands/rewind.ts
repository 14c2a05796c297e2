/**
 * `waystation rewind DIR TASK STEP [--redo EFFECT]... [--yes]`: rerun a task
 * from a step. Without `--yes` it prints what the rewind would do (the steps
 * to rerun, the artifacts written again, each recorded effect with its choice)
 * and writes nothing; with it, it writes the rewind as a new version. Effects
 * are kept (not repeated) unless named with `--redo`, which performs that one
 * again under a new idempotency key.
 */
import type { Command } from 'commander';
import { requireTask, shownLocation, UsageError, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { shellWord } from '../../../shared/checkpoint/fill-directory.js';
import { formatJson } from '../output.js';
import { OperationError } from '../../runtime/task-operations.js';
import { describeRewind, planRewind } from '../../runtime/rewind-task.js';
import { cliRunner, OPERATION_EXIT_HELP, reportOutcome } from './run.js';

const collect = (value: string, previous: string[]) => [...previous, value];

export function register(program: Command, ctx: CliContext): void {
  program
    .command('rewind')
    .description('rerun a task from a step: shows the plan, and with --yes writes it (effects are kept unless --redo names them)')
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .argument('<STEP>', 'the step to rerun from (id or name); every later step reruns too')
    .option('--redo <EFFECT>', 'perform this recorded effect again, under a new idempotency key (repeatable)', collect, [] as string[])
    .option('--yes', 'write the rewind (without it, only the plan is shown)')
    .option('--reason <TEXT>', 'why (recorded)')
    .option('--by <NAME>', 'who rewinds (default: $USER)')
    .option('--json', 'print the plan or the outcome as JSON')
    .addHelpText('after', OPERATION_EXIT_HELP)
    .action(
      async (
        dir: string,
        taskId: string,
        step: string,
        opts: { redo: string[]; yes?: boolean; reason?: string; by?: string; json?: boolean },
      ) => {
        const { root, entry } = await requireTask(ctx, dir, taskId);
        if (!entry.checkpoint) throw new UsageError(`task ${taskId} cannot be read; \`waystation verify ${dir} ${taskId}\` says why`);
        let plan;
        try {
          plan = planRewind(entry.checkpoint, step, opts.redo);
        } catch (err) {
          if (err instanceof OperationError) throw new UsageError(err.message);
          throw err;
        }
        if (!opts.yes) {
          if (opts.json) ctx.io.out(formatJson({ plan, written: false }));
          else {
            ctx.io.out(`rewind of ${ctx.style.bold(taskId)} at version ${plan.version} would:\n  ${describeRewind(plan).join('\n  ')}\n`);
            ctx.io.out(
              `nothing was written; to rewind: ${['waystation', 'rewind', shownLocation(dir), taskId, step, ...opts.redo.flatMap((r) => ['--redo', r]), '--yes'].map(shellWord).join(' ')}\n`,
            );
          }
          return;
        }
        const outcome = await cliRunner(ctx, root, opts.by).rewind(taskId, step, {
          redo: opts.redo,
          reason: opts.reason,
          expectedVersion: plan.version,
        });
        reportOutcome(ctx, dir, outcome, Boolean(opts.json));
      },
    );
}

/**
 * `waystation result DIR TASK STEP [--version N] [--json]`: one step's whole
 * result, as the step returned it (the plan in `show` has only a preview).
 */
import type { Command } from 'commander';
import { checkpointAt } from '../checkpoint-at.js';
import { ExitCode, requireSourceTask, UsageError, type CliContext, SOURCE_ARGUMENT } from '../cli-context.js';
import { formatJson, formatProblem } from '../output.js';
import { readStepResult } from '../step-result.js';

/** Step ids named in a "no such step" message before it says how many more there are. */
const IDS_NAMED = 8;

function noSuchStep(taskId: string, stepId: string, version: number, ids: readonly string[]): UsageError {
  const named = ids.slice(0, IDS_NAMED).join(', ');
  const more = ids.length > IDS_NAMED ? ` and ${ids.length - IDS_NAMED} more` : '';
  const steps = ids.length === 0 ? 'it has no steps' : `its steps are ${named}${more}`;
  return new UsageError(`task ${taskId} has no step "${stepId}" at version ${version}: ${steps}`);
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('result')
    .description("print one step's whole result: text as it is, anything else as JSON")
    .argument('<DIR>', SOURCE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .argument('<STEP>', 'the step id (the ID column of `waystation show`)')
    .option('--version <N>', 'the result as of version N instead of the latest ("latest" also works)')
    .option('--json', 'print the result as JSON, text results too (quoted)')
    .addHelpText(
      'after',
      '\nExit status: 0 when the result was printed; 1 when the step has no result yet or it cannot be read;' +
        ' 2 for an unknown task, step or version.',
    )
    .action(async (dir: string, taskId: string, stepId: string, opts: { version?: string; json?: boolean }) => {
      const { source: store, entry } = await requireSourceTask(ctx, dir, taskId);
      const read = await checkpointAt(store, entry, opts.version);
      if (!read.ok) {
        ctx.io.err(`${taskId} cannot be read, so neither can its results:\n`);
        for (const p of read.problems) ctx.io.err(`  ${formatProblem(ctx.errStyle, p)}\n`);
        return ctx.fail(ExitCode.problems);
      }
      const cp = read.checkpoint;
      const step = cp.plan.find((s) => s.id === stepId);
      if (!step)
        throw noSuchStep(
          entry.task_id,
          stepId,
          cp.version,
          cp.plan.map((s) => s.id),
        );
      const result = await readStepResult(store, entry.task_id, step);
      if (result.state === 'none') {
        ctx.io.err(
          `step ${stepId} of task ${entry.task_id} has no result at version ${cp.version} (it is ${step.status})` +
            (step.error ? `; it failed: ${step.error.message}` : '') +
            '\n',
        );
        return ctx.fail(ExitCode.problems);
      }
      if (result.state === 'unreadable') {
        ctx.io.err(`the result of step ${stepId} of task ${entry.task_id} cannot be read: ${result.message}\n`);
        return ctx.fail(ExitCode.problems);
      }
      const { value } = result;
      if (opts.json || typeof value !== 'string') ctx.io.out(formatJson(value));
      else ctx.io.out(value.endsWith('\n') ? value : `${value}\n`);
    });
}

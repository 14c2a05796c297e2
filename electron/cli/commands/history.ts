/**
 * `waystation history DIR TASK`: every version of a task, oldest first, with
 * who or what wrote it and when.
 */
import type { Command } from 'commander';
import { TaskReadError } from '../../store/store-types.js';
import { ExitCode, requireSourceTask, type CliContext, SOURCE_ARGUMENT } from '../cli-context.js';
import { formatBytes, formatJson, formatProblem, table } from '../output.js';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('history')
    .description('list the versions of a task with their source and time')
    .argument('<DIR>', SOURCE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .option('--json', 'print an array of {version, source, updated_at, bytes}')
    .addHelpText(
      'after',
      '\nExit status: 0 for a complete history, 1 when versions are missing, unreadable or misnumbered, 2 for an unknown task.',
    )
    .action(async (dir: string, taskId: string, opts: { json?: boolean }) => {
      const { source: store, entry } = await requireSourceTask(ctx, dir, taskId);
      let versions;
      try {
        versions = await store.history(entry.task_id);
      } catch (err) {
        if (!(err instanceof TaskReadError)) throw err;
        ctx.io.err(`the history of ${taskId} cannot be read:\n`);
        for (const p of err.problems) ctx.io.err(`  ${formatProblem(ctx.errStyle, p)}\n`);
        ctx.fail(ExitCode.problems);
        return;
      }
      // Gaps and version numbers that contradict each other (a misnumbered file, a checkpoint.json ahead of the
      // files) are reported on the task rather than thrown, so the versions that exist stay listed.
      const gaps = entry.problems.filter((p) => p.reason === 'missing-version' || p.reason === 'invariant');
      if (gaps.length > 0) ctx.fail(ExitCode.problems);
      for (const p of gaps) ctx.io.err(`${formatProblem(ctx.errStyle, p)}\n`);
      if (opts.json) {
        ctx.io.out(formatJson(versions.map((v) => ({ version: v.version, source: v.source, updated_at: v.updated_at, bytes: v.bytes }))));
        return;
      }
      const s = ctx.style;
      const rows = versions.map((v) => [
        String(v.version),
        v.updated_at,
        v.source.kind,
        [
          v.source.actor,
          v.source.note,
          v.source.imported_from ? `from ${v.source.imported_from.path}` : '',
          v.source.edit ? `edited step ${v.source.edit.step_id}` : '',
        ]
          .filter(Boolean)
          .join('; '),
        s.dim(formatBytes(v.bytes)),
      ]);
      ctx.io.out(
        versions.length ? table(rows, ['VERSION', 'UPDATED', 'SOURCE', 'DETAIL', 'SIZE'], s) : `${taskId} has no readable versions\n`,
      );
    });
}

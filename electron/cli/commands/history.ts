/**
 * `waystation history DIR TASK`: every version of a task, oldest first, with
 * who or what wrote it and when.
 */
import type { Command } from 'commander';
import { TaskReadError, type CheckpointSource, type VersionInfo } from '../../store/store-types.js';
import { problem, type Problem } from '../../../shared/checkpoint/problem.js';
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
      // A version whose file is there but does not read (a record changed after it was written, and the deltas
      // built on it) is left out of the list: said here with the reason a read of it gives, never left out silently.
      const unread = entry.format === 'waystation' ? await unreadVersions(store, entry.task_id, versions, gaps) : [];
      if (gaps.length + unread.length > 0) ctx.fail(ExitCode.problems);
      for (const p of [...gaps, ...unread]) ctx.io.err(`${formatProblem(ctx.errStyle, p)}\n`);
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

/**
 * The problems of the versions up to the newest listed that the list leaves out and no gap problem names: each read
 * on its own, so the reason is the store's (its first problem).
 */
async function unreadVersions(
  store: CheckpointSource,
  taskId: string,
  listed: readonly VersionInfo[],
  gaps: readonly Problem[],
): Promise<Problem[]> {
  const shown = new Set(listed.map((v) => v.version));
  const newest = listed.at(-1)?.version ?? 0;
  const out: Problem[] = [];
  for (let v = 1; v < newest; v++) {
    if (shown.has(v) || gaps.some((p) => new RegExp(`\\bversions? ${v}\\b`).test(p.message))) continue;
    try {
      await store.readVersion(taskId, v);
    } catch (err) {
      if (!(err instanceof TaskReadError)) throw err;
      const why = err.problems[0] ?? problem(taskId, 'unreadable', `version ${v} cannot be read`);
      // A delta on a version that does not read fails for that version's reason: said once.
      if (!out.some((p) => p.file === why.file && p.message === why.message)) out.push(why);
      continue;
    }
    // Read on its own but left out of the replay (a delta whose base did not read): said all the same.
    out.push(problem(taskId, 'unreadable', `version ${v} reads on its own, but the versions before it do not rebuild it`));
  }
  return out;
}

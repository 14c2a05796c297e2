/**
 * `waystation ls DIR`: every task in a checkpoint directory, readable or not,
 * with the status it should be shown with and the problems found.
 */
import type { Command } from 'commander';
import { hasErrors, withPlan, type TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import { rowReadWhole, summarizeListing, withFileProblems } from '../../verify/summarize-entry.js';
import type { Problem } from '../../../shared/checkpoint/problem.js';
import { ExitCode, requireSource, shownLocation, type CliContext, SOURCE_ARGUMENT } from '../cli-context.js';
import { colorStatus, formatJson, formatProblem, table } from '../output.js';

function renderHuman(ctx: CliContext, dir: string, tasks: TaskSummary[]): string {
  const s = ctx.style;
  if (tasks.length === 0) return `no tasks in ${dir}\n`;
  const rows: string[][] = [];
  const lines: string[] = [];
  const header = ['TASK', 'STATUS', 'STEP', 'PHASE', 'VER', 'UPDATED', 'NAME'];
  for (const t of tasks) {
    const step = t.current_step === null ? '-' : `${t.current_step}/${t.total_steps ?? '?'}`;
    const tags = [t.format === 'waystation' ? '' : t.format, t.read_only ? 'read-only' : ''].filter(Boolean);
    const name = [t.task_name ?? '', tags.length ? s.dim(`[${tags.join(', ')}]`) : ''].filter(Boolean).join(' ');
    rows.push([
      s.bold(t.task_id),
      colorStatus(s, t.display_status),
      step,
      t.phase ?? '-',
      t.version === null ? '-' : String(t.version),
      t.updated_at ?? '-',
      name,
    ]);
  }
  lines.push(table(rows, header, s).trimEnd());
  const troubled = tasks.filter((t) => t.problems.length > 0);
  for (const t of troubled) {
    lines.push('', `${s.bold(t.task_id)} ${s.dim(`(${t.location})`)}`);
    for (const p of t.problems) lines.push(`  ${formatProblem(s, p)}`);
  }
  const broken = tasks.filter((t) => hasErrors(t.problems)).length;
  lines.push('', s.dim(`${tasks.length} task${tasks.length === 1 ? '' : 's'}` + (broken ? `, ${broken} with problems` : '')));
  return lines.join('\n') + '\n';
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('ls')
    .description('list the tasks in a checkpoint directory, readable or not')
    .argument('<DIR>', SOURCE_ARGUMENT)
    .option('--json', "print an array of task summaries (the shape of GET /api/tasks), each with its plan's steps (id, name, status)")
    .addHelpText(
      'after',
      '\nA task whose recorded artifacts are missing or changed size shows as drifted (a stat, no hashing);' +
        ' `waystation verify DIR TASK` also hashes them and finds same-size edits.' +
        '\nExit status: 0 when every task is readable and consistent, 1 when any task has an error-level problem.',
    )
    .action(async (dir: string, opts: { json?: boolean }) => {
      const { source } = await requireSource(ctx, dir);
      const asked: Promise<Problem[][]>[] = [];
      // Summarized a slice at a time as the listing reads them (see KeepListed): no parsed checkpoint outlives its slice.
      const listed = await source.listTasks(async (entries) => {
        // Asked as the slice is handed over, answered while the next is read (a directory checks on a thread of its own).
        const question = source.fileProblems(entries);
        // A failure is reported once every slice is listed (the Promise.all below), not as an unhandled rejection now.
        question.catch(() => {});
        asked.push(question);
        const rows = await summarizeListing(source, entries);
        // Only --json prints the plan's steps: the table is drawn from the summaries alone.
        return rows.map(({ entry, summary }) => (opts.json ? withPlan(summary, entry.checkpoint) : summary));
      });
      const found = (await Promise.all(asked)).flat();
      // Most rows' files show nothing: those are taken as listed, without a turn of their own.
      const readWhole = async (t: TaskSummary, problems: Problem[]) => {
        const whole = await rowReadWhole(source, t, problems);
        if (!whole) return withFileProblems(t, problems);
        return opts.json ? withPlan(whole.summary, whole.entry.checkpoint) : whole.summary;
      };
      const tasks = await Promise.all(listed.map((t, i) => (found[i].length === 0 ? t : readWhole(t, found[i]))));
      ctx.io.out(opts.json ? formatJson(tasks) : renderHuman(ctx, shownLocation(dir), tasks));
      if (tasks.some((t) => hasErrors(t.problems))) ctx.fail(ExitCode.problems);
    });
}

/**
 * `waystation copy SOURCE DEST [--task ID]`: copy tasks between any two
 * stores (directory or database), every version, blob and event, checked
 * by hash; the source is only read, and a second run copies nothing.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { isPostgresUrl } from '../../store/postgres/redact-url.js';
import { copyTasks } from '../../store/copy-tasks.js';
import { ExitCode, requireLocation, shownLocation, UsageError, type CliContext } from '../cli-context.js';
import { formatJson, table } from '../output.js';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('copy')
    .description('copy tasks from one store to another (directory or postgres:// URL), verified by hash')
    .argument('<SOURCE>', 'the checkpoint directory or database to copy from (only read)')
    .argument('<DEST>', 'the checkpoint directory or database to copy to')
    .option('--task <ID>', 'copy this task only')
    .option('--json', 'print one {task_id, status, versions, events, reason} per task')
    .addHelpText('after', '\nExit status: 0 when every task was copied or already there, 1 when a task was refused.')
    .action(async (from: string, to: string, opts: { task?: string; json?: boolean }) => {
      const source = ctx.openStore(await requireLocation(from));
      // The destination directory is made when it does not exist yet (a database must exist; its schema is made).
      const dest = ctx.openStore(isPostgresUrl(to) ? to : path.resolve(to));
      try {
        if (opts.task !== undefined && !(await source.getTask(opts.task)))
          throw new UsageError(`no task "${opts.task}" in ${shownLocation(from)}; nothing was copied`);
        const outcomes = await copyTasks(source, dest, { taskId: opts.task });
        if (opts.json) ctx.io.out(formatJson(outcomes));
        else {
          const s = ctx.style;
          const rows = outcomes.map((o) => [
            s.bold(o.task_id),
            o.status === 'refused' ? s.red(o.status) : o.status,
            String(o.versions),
            String(o.events),
            o.reason ?? '',
          ]);
          ctx.io.out(`${table(rows, ['TASK', 'STATUS', 'VERSIONS', 'EVENTS', 'WHY'], s).trimEnd()}\n`);
          ctx.io.out(`${outcomes.length} task${outcomes.length === 1 ? '' : 's'} from ${shownLocation(from)} to ${shownLocation(to)}\n`);
        }
        if (outcomes.some((o) => o.status === 'refused')) ctx.fail(ExitCode.problems);
      } finally {
        await Promise.all([source.close(), dest.close()]);
      }
    });
}

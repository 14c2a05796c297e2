/**
 * `waystation copy SOURCE DEST [--task ID]`: copy tasks between any two
 * stores (directory or database), every version, blob and event, checked
 * by hash; the source is only read, and a second run copies nothing.
 */
import { realpath } from 'node:fs/promises';
import type { Command } from 'commander';
import { isPostgresUrl } from '../../store/postgres/redact-url.js';
import { copyTasks } from '../../store/copy-tasks.js';
import { ExitCode, requireLocation, shownLocation, UsageError, type CliContext } from '../cli-context.js';
import { formatJson, table } from '../output.js';
import { directoryToMake } from '../directory-argument.js';

/**
 * Whether two locations name one store: one database URL written twice, or one directory however it is reached (a
 * link, `..`). Copying a store onto itself would only report every task up to date.
 */
async function sameStore(a: string, b: string): Promise<boolean> {
  if (isPostgresUrl(a) || isPostgresUrl(b)) return a === b;
  const [ra, rb] = await Promise.all([a, b].map((p) => realpath(p).catch(() => null)));
  return ra !== null && ra === rb;
}

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
      const sourceLocation = await requireLocation(from);
      const destLocation = isPostgresUrl(to) ? to : directoryToMake(to);
      if ((await sameStore(sourceLocation, destLocation)) === true)
        throw new UsageError(`${shownLocation(from)} and ${shownLocation(to)} are the same store; nothing was copied`);
      const source = ctx.openStore(sourceLocation);
      // The destination directory is made when it does not exist yet (a database must exist; its schema is made).
      const dest = ctx.openStore(destLocation);
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

/**
 * `waystation copy SOURCE DEST [--task ID]`: copy tasks between any two
 * stores (directory or database), every version, blob and event, checked
 * by hash; the source is only read, and a second run copies nothing.
 */
import type { Command } from 'commander';
import { isPostgresUrl } from '../../store/postgres/redact-url.js';
import { copyTasks } from '../../store/copy-tasks.js';
import { locationKind, sameStore } from '../../store/open-location.js';
import { ExitCode, requireLocation, shownLocation, UsageError, type CliContext } from '../cli-context.js';
import { formatJson, table } from '../output.js';
import { directoryToMake } from '../directory-argument.js';
import { artifactsElsewhere, type ArtifactsElsewhere } from '../../verify/artifacts-elsewhere.js';

/**
 * The note after tasks were copied from the directory `dir` into the database `url`: a database names no folder, so
 * relative artifact paths resolve against the folder a command runs in (docs/POSTGRES.md, "What a database changes").
 */
function artifactsNote(dir: string, url: string): string {
  return (
    `note: the artifact files were not copied; they stay in ${dir}. A database names no folder: resume, verify and serve of ` +
    `${url} look for a task's artifacts in the folder they run in, so run them in ${dir} (elsewhere the artifacts count as ` +
    'missing, and resume stops for a person).\n'
  );
}

/** The note after a copy whose tasks' artifact files stay where `dest` (shown) does not look for them. */
function filesElsewhereNote(left: ArtifactsElsewhere, dest: string, destIsDatabase: boolean): string {
  const files = `${left.files} artifact file${left.files === 1 ? '' : 's'}`;
  const where = destIsDatabase ? ' (the folder its commands run in)' : '';
  return (
    `note: ${files} of the copied tasks ${left.files === 1 ? 'stays' : 'stay'} in ${left.from}, and ${dest} looks for them in ${left.to}${where}: copy them there, ` +
    `at the same paths, for verify and resume of ${dest} to find them (else they count as missing, and resume stops for a person).\n`
  );
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('copy')
    .description('copy tasks from one store to another (directory or postgres:// URL), verified by hash')
    .argument('<SOURCE>', 'the checkpoint directory or database to copy from (only read)')
    .argument('<DEST>', 'the checkpoint directory or database to copy to')
    .option('--task <ID>', 'copy this task only')
    .option('--json', 'print one {task_id, status, versions, events, reason} per task')
    .addHelpText(
      'after',
      `
Exit status:
  0  every task was copied or was already there
  1  a task was refused (the WHY column says why), or a store could not be used (a database
     out of reach, a disk error)
  2  bad input: no such folder or task, or the same store as source and destination
     (however each is written); nothing was copied`,
    )
    .action(async (from: string, to: string, opts: { task?: string; json?: boolean }) => {
      const sourceLocation = await requireLocation(from);
      const destLocation = isPostgresUrl(to) ? to : directoryToMake(to);
      // Copied onto itself a store would only report every task up to date.
      if (await sameStore(sourceLocation, destLocation))
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
        // A copy carries checkpoints: the files their artifacts name stay where they are.
        const copied = outcomes.filter((o) => o.status === 'copied').map((o) => o.task_id);
        const intoDatabase = locationKind(destLocation) === 'postgres';
        if (copied.length > 0 && intoDatabase && locationKind(sourceLocation) === 'directory')
          ctx.io.err(artifactsNote(shownLocation(from), shownLocation(to)));
        else if (copied.length > 0) {
          const left = await artifactsElsewhere(source, dest, copied);
          if (left) ctx.io.err(filesElsewhereNote(left, shownLocation(to), intoDatabase));
        }
        if (outcomes.some((o) => o.status === 'refused')) ctx.fail(ExitCode.problems);
      } finally {
        await Promise.all([source.close(), dest.close()]);
      }
    });
}

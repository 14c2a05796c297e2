/**
 * `waystation verify DIR TASK`: check a task's checkpoint against the disk:
 * artifacts present and unchanged, side effects with an unknown outcome, and
 * the checkpoint's own invariants, and what a crash or a power cut left behind.
 * Read-only: nothing is repaired.
 *
 * A LangGraph checkpointer is refused: a thread records no artifacts and no
 * side-effect ledger, and its checkpoints are mapped afresh at every read, so
 * there is nothing for verify to check that `show` does not already say.
 */
import type { Command } from 'commander';
import type { VerifyResult } from '../../../shared/api/contract.js';
import { hasRecoveryNews, type RecoveryReport } from '../../store/recovery-report.js';
import { verifyTask, withNumberingProblems } from '../../verify/verify-task.js';
import { detectLocation } from '../../sources/detect-location.js';
import { LangGraphDatabaseError } from '../../store/postgres/pg-schema.js';
import { isPostgresUrl } from '../../store/postgres/redact-url.js';
import { ExitCode, requireTask, shownLocation, UsageError, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { colorStatus, formatJson, formatProblem, type Style } from '../output.js';

/** The verify report as text: artifacts, uncertain side effects, invariants, and what an interruption lost. */
export function renderReport(s: Style, r: VerifyResult): string {
  const out: string[] = [];
  out.push(`${s.bold(r.task_id)} version ${r.version}: ${r.ok ? s.green('ok') : s.red('needs attention')}`);
  out.push(s.dim(`relative artifact paths resolved against ${r.base_dir}`));
  out.push('', s.bold('Artifacts'));
  if (r.artifacts.length === 0) out.push(s.dim('  (none recorded)'));
  for (const a of r.artifacts)
    out.push(`  ${colorStatus(s, a.status.padEnd(12))} ${a.path}${a.status === 'ok' ? '' : s.dim(`  ${a.message}`)}`);
  out.push('', s.bold('Side effects with an unknown outcome'));
  if (r.uncertain_effects.length === 0) out.push(s.dim('  (none)'));
  for (const e of r.uncertain_effects) out.push(`  ${colorStatus(s, e.status.padEnd(12))} ${e.id} ${s.dim(e.message)}`);
  out.push('', s.bold('Invariants'));
  if (r.invariant_problems.length === 0) out.push(s.dim('  (all hold)'));
  for (const p of r.invariant_problems) out.push(`  ${formatProblem(s, p)}`);
  if (r.recovery) out.push('', s.bold('Recovery after an interruption'), ...renderRecovery(r.recovery));
  return out.join('\n') + '\n';
}

/** The refusal of a LangGraph checkpointer, file or database: what verify checks, and what shows a thread instead. */
function nothingToVerify(location: string, taskId: string): UsageError {
  const shown = shownLocation(location);
  return new UsageError(
    `${shown} is a LangGraph checkpointer: verify checks what a Waystation task records (its artifacts against the disk, ` +
      'side effects whose outcome is unknown, what a crash left behind), and a LangGraph thread records none of these, ' +
      `so there is nothing to verify. \`waystation show ${shown} ${taskId}\` shows the thread and any checkpoint that cannot be read`,
  );
}

/**
 * The task to verify; a LangGraph checkpointer refused, told apart without a connection of its own: a file is
 * looked at (its first bytes), a database is refused by its store when asked for the task.
 */
async function taskToVerify(ctx: CliContext, location: string, taskId: string): ReturnType<typeof requireTask> {
  if (!isPostgresUrl(location) && (await detectLocation(location)).kind === 'langgraph-sqlite') throw nothingToVerify(location, taskId);
  try {
    return await requireTask(ctx, location, taskId);
  } catch (err) {
    throw err instanceof LangGraphDatabaseError ? nothingToVerify(location, taskId) : err;
  }
}

/** The recovery account, one indented line per sentence. */
export function renderRecovery(r: RecoveryReport): string[] {
  return r.account.map((line) => `  ${line}`);
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('verify')
    .description('check a task against the disk: artifacts, uncertain side effects, invariants')
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .option('--json', 'print the verify report')
    .option('--confine', 'refuse absolute artifact paths outside the base directory instead of checking them')
    .addHelpText(
      'after',
      "\nRelative artifact paths resolve against the agent's project_root when recorded, else DIR.\n" +
        'A relative path that leaves that base (.. or a symlink) is reported, never read.\n\n' +
        'Exit status: 0 when all is in order, 1 when an artifact drifted, a side effect is uncertain,\n' +
        'an invariant is broken or the checkpoint cannot be read; 2 for an unknown task, and for a LangGraph\n' +
        'checkpointer (its SQLite file or database), whose threads record no artifacts or side effects to verify.',
    )
    .action(async (dir: string, taskId: string, opts: { json?: boolean; confine?: boolean }) => {
      const { store, entry } = await taskToVerify(ctx, dir, taskId);
      // What a crash or a power cut lost: only a native task has versions to tear.
      const recovery = await store.recoveryReport(entry);
      const news = recovery && hasRecoveryNews(recovery) ? recovery : undefined;
      if (!entry.checkpoint) {
        ctx.io.err(`${taskId} cannot be verified: its checkpoint cannot be read\n`);
        for (const p of entry.problems) ctx.io.err(`  ${formatProblem(ctx.errStyle, p)}\n`);
        if (news) ctx.io.err(`${renderRecovery(news).join('\n')}\n`);
        return ctx.fail(ExitCode.problems);
      }
      const verified = withNumberingProblems(
        await verifyTask(store.artifactRoot, entry.checkpoint, {
          location: entry.location,
          format: entry.format,
          allowAbsolute: !opts.confine,
        }),
        entry.problems,
      );
      const report: VerifyResult = news ? { ...verified, recovery: news } : verified;
      ctx.io.out(opts.json ? formatJson(report) : renderReport(ctx.style, report));
      if (!report.ok) ctx.fail(ExitCode.problems);
    });
}

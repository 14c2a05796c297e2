/**
 * `waystation show DIR TASK [--version N]`: one checkpoint, whole: what the
 * task is for, where it stands, what each step produced (a one-line preview;
 * `waystation result` prints one whole), what it did, and how to resume it.
 */
import { fillDirectory } from '../../../shared/checkpoint/fill-directory.js';
import type { Command } from 'commander';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import type { Problem } from '../../../shared/checkpoint/problem.js';
import { checkInvariants } from '../../../shared/checkpoint/invariants.js';
import { deriveDisplayStatus } from '../../../shared/checkpoint/task-state.js';
import { mayBeDriven } from '../../../shared/checkpoint/task-summary.js';
import type { CheckpointSource, TaskEntry } from '../../store/store-types.js';
import { checkpointFileOf } from '../../verify/verify-task.js';
import { checkpointAt } from '../checkpoint-at.js';
import { ExitCode, requireSourceTask, shownLocation, type CliContext, SOURCE_ARGUMENT } from '../cli-context.js';
import { renderLangGraphState } from '../langgraph-output.js';
import {
  colorStatus,
  formatBytes,
  formatCost,
  formatDuration,
  formatJson,
  formatProblem,
  previewValue,
  shortSha,
  table,
  type Style,
} from '../output.js';
import { readPlanResults, type StepResult } from '../step-result.js';

/** Columns a step's result preview may take in the plan table. */
export const RESULT_PREVIEW_WIDTH = 48;

/** A step's cell in the RESULT / ERROR column: its error, else a preview of its result. */
function resultCell(s: Style, error: string | undefined, result: StepResult | undefined): string {
  if (error) return s.red(previewValue(error, RESULT_PREVIEW_WIDTH));
  if (!result || result.state === 'none') return '';
  if (result.state === 'unreadable') return s.red('(unreadable result)');
  return previewValue(result.value, RESULT_PREVIEW_WIDTH);
}

/** What renderCheckpoint may be told beyond the checkpoint. */
export interface RenderContext {
  /** The derived display status, when known. */
  shownAs?: string;
  /** The steps' results by step id, previewed in the plan. */
  results?: ReadonlyMap<string, StepResult>;
  /** The directory as the user wrote it, for the command that prints a whole result. */
  dir?: string;
}

/** Render a checkpoint for a person. */
export function renderCheckpoint(s: Style, cp: Checkpoint, { shownAs, results, dir }: RenderContext = {}): string {
  const out: string[] = [];
  const field = (label: string, value: string) => out.push(`${s.dim(label.padEnd(12))} ${value}`);
  out.push(`${s.bold(cp.task_id)}  ${cp.task_name}`);
  field('goal', cp.goal || s.dim('(none)'));
  field(
    'status',
    shownAs && shownAs !== cp.status ? `${colorStatus(s, shownAs)} ${s.dim(`(checkpoint says ${cp.status})`)}` : colorStatus(s, cp.status),
  );
  field('phase', cp.phase || s.dim('(none)'));
  field('step', `${cp.current_step} of ${cp.total_steps} done`);
  const src = cp.source;
  field('version', `${cp.version} ${s.dim(`(${[src.kind, src.actor, src.note].filter(Boolean).join(', ')})`)}`);
  field('mode', cp.recovery.mode);
  if (cp.agent) field('agent', [cp.agent.name, cp.agent.module ? s.dim(cp.agent.module) : ''].filter(Boolean).join(' '));

  out.push('', s.bold('Plan'));
  if (cp.plan.length === 0) out.push(s.dim('  (empty)'));
  else {
    const rows = cp.plan.map((step, i) => [
      `${i === cp.current_step ? s.cyan('▸') : ' '} ${i + 1}`,
      step.id,
      step.name,
      colorStatus(s, step.status),
      step.attempts ? String(step.attempts) : '',
      step.elapsed_ms !== undefined ? formatDuration(step.elapsed_ms) : '',
      resultCell(s, step.error?.message, results?.get(step.id)),
    ]);
    out.push(table(rows, ['  #', 'ID', 'NAME', 'STATUS', 'TRIES', 'TIME', 'RESULT / ERROR'], s).trimEnd().replace(/^/gm, '  '));
    for (const [id, r] of results ?? []) if (r.state === 'unreadable') out.push(`  ${s.red('✗')} result of ${id}: ${r.message}`);
    if ([...(results?.values() ?? [])].some((r) => r.state === 'value'))
      out.push(s.dim(`  a whole result: ${fillDirectory(`waystation result <DIR> ${cp.task_id} STEP`, dir ?? null)}`));
  }

  out.push('', s.bold('Artifacts'));
  if (cp.artifacts.length === 0) out.push(s.dim('  (none)'));
  else {
    const rows = cp.artifacts.map((a) => [a.path, a.type, a.status, formatBytes(a.size), s.dim(shortSha(a.sha256)), a.step_id ?? '']);
    out.push(table(rows, ['PATH', 'TYPE', 'STATUS', 'SIZE', 'SHA256', 'STEP'], s).trimEnd().replace(/^/gm, '  '));
  }

  out.push('', s.bold('Side effects'));
  if (cp.side_effects.length === 0) out.push(s.dim('  (none)'));
  else {
    const rows = cp.side_effects.map((e) => [
      e.id,
      e.type,
      colorStatus(s, e.status),
      e.idempotency_key,
      e.step_id ?? '',
      e.reconciliation ?? '',
    ]);
    out.push(table(rows, ['ID', 'TYPE', 'STATUS', 'IDEMPOTENCY KEY', 'STEP', 'RECONCILED'], s).trimEnd().replace(/^/gm, '  '));
  }

  const pending = cp.recovery.pending_approval;
  if (pending) {
    out.push('', s.bold(s.yellow('Waiting for approval')) + s.dim(` (${pending.id}, requested ${pending.requested_at})`));
    const p = pending.plan;
    if (p.rerun_step) out.push(`  rerun step ${p.rerun_step}`);
    if (p.probe_effects.length) out.push(`  probe effects ${p.probe_effects.join(', ')}`);
    if (p.retry_effects.length) out.push(`  retry effects ${p.retry_effects.join(', ')}`);
    if (p.drift.length) out.push(`  drifted ${p.drift.join(', ')}`);
  }

  if (cp.errors.length > 0) {
    out.push('', s.bold('Errors'));
    for (const e of cp.errors) {
      out.push(`  ${s.dim(e.at)} ${e.step_id ? `[${e.step_id}] ` : ''}${s.red(e.what)}`);
      if (e.fix) out.push(`    fix: ${e.fix}`);
      if (e.verification) out.push(`    verified: ${e.verification}`);
    }
  }

  out.push('', s.bold('Resume hint'), `  ${cp.resume_hint ? fillDirectory(cp.resume_hint, dir ?? null) : s.dim('(none)')}`);

  const run = cp.run;
  out.push('', s.bold('Run'));
  field('  model', run.model ?? '-');
  field('  tokens', `${run.tokens_in} in, ${run.tokens_out} out`);
  field('  cost', formatCost(run.cost_usd));
  field('  elapsed', formatDuration(run.elapsed_ms));
  field('  llm calls', String(run.llm_calls.length));
  field('  created', run.created_at);
  field('  updated', run.updated_at);
  field('  history', `${cp.history.count} message${cp.history.count === 1 ? '' : 's'}`);
  return out.join('\n') + '\n';
}

async function displayStatusOf(store: CheckpointSource, entry: TaskEntry, cp: Checkpoint): Promise<string> {
  const leaseHeld = mayBeDriven(entry.format) && (await store.readLease(entry.task_id)).info.held;
  return deriveDisplayStatus(cp, { leaseHeld, drift: false, unreadable: false });
}

function reportUnreadable(ctx: CliContext, taskId: string, problems: readonly Problem[]): void {
  ctx.io.err(`${taskId} cannot be shown:\n`);
  for (const p of problems) ctx.io.err(`  ${formatProblem(ctx.errStyle, p)}\n`);
  ctx.fail(ExitCode.problems);
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('show')
    .description(
      "print one checkpoint: goal, status, plan with each step's result in brief, artifacts, side effects, resume hint, run metadata",
    )
    .argument('<DIR>', SOURCE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .option('--version <N>', 'show version N instead of the latest ("latest" also works)')
    .option('--json', 'print the whole canonical checkpoint')
    .addHelpText(
      'after',
      "\nEach step's result is previewed on one line (text as text, anything else as compact JSON);" +
        ' `waystation result DIR TASK STEP` prints one whole.' +
        "\nExit status: 0 when the checkpoint was shown, 1 when it or a step's result cannot be read, 2 for an unknown task or version.",
    )
    .action(async (dir: string, taskId: string, opts: { version?: string; json?: boolean }) => {
      const { source: store, entry } = await requireSourceTask(ctx, dir, taskId);
      const read = await checkpointAt(store, entry, opts.version);
      if (!read.ok) return reportUnreadable(ctx, taskId, read.problems);
      const cp = read.checkpoint;
      if (opts.json) {
        ctx.io.out(formatJson(cp));
        return;
      }
      const shownAs = cp === entry.checkpoint ? await displayStatusOf(store, entry, cp) : undefined;
      const results = await readPlanResults(store, cp);
      if ([...results.values()].some((r) => r.state === 'unreadable')) ctx.fail(ExitCode.problems);
      ctx.io.out(renderCheckpoint(ctx.style, cp, { shownAs, results, dir: shownLocation(dir) }) + renderLangGraphState(ctx.style, cp));
      const problems = [
        ...entry.problems,
        ...checkInvariants(cp, checkpointFileOf(entry.location), { legacy: entry.format !== 'waystation' }),
      ];
      if (problems.length > 0) {
        ctx.io.out(`\n${ctx.style.bold('Problems')}\n`);
        for (const p of problems) ctx.io.out(`  ${formatProblem(ctx.style, p)}\n`);
      }
    });
}

/**
 * `waystation diff DIR TASK A B`: what changed between two versions, first as
 * a reviewer would say it, then field by field.
 */
import type { Command } from 'commander';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import {
  isEmptySummary,
  structuredDiff,
  summarizeChange,
  type ChangeSummary,
  type StructuredDiffEntry,
} from '../../../shared/diff/semantic-summary.js';
import { langGraphPartOf, summarizeLangGraphChange } from '../../../shared/diff/langgraph-change.js';
import { renderLangGraphChange } from '../langgraph-output.js';
import { TaskReadError } from '../../store/store-types.js';
import { ExitCode, parseVersion, requireSourceTask, type CliContext, SOURCE_ARGUMENT } from '../cli-context.js';
import { colorStatus, formatCost, formatDuration, formatJson, formatProblem, inlineJson, shortSha, signed, type Style } from '../output.js';

/**
 * A checkpoint's `current_step` (an index into the plan, from 0) as `show` and the inspector's plan number the
 * steps, from 1: `3 of 4`; past the last step, `end of the plan`. `total` unknown: the number alone.
 */
export function stepNumber(index: number, total?: number | null): string {
  if (total === undefined || total === null || total <= 0) return String(index + 1);
  return index >= total ? 'end of the plan' : `${index + 1} of ${total}`;
}

/** The semantic summary as lines of text; `steps`, the plan's length, numbers the current step as the plan does. */
export function renderSummary(s: Style, c: ChangeSummary, steps?: number | null): string {
  const out: string[] = [];
  const arrow = s.dim('→');
  const src = c.source;
  out.push(
    `${s.bold(c.task_id)} version ${c.from_version} ${arrow} ${c.to_version} ${s.dim(`(written by ${[src.kind, src.actor, src.note].filter(Boolean).join(', ')})`)}`,
  );
  if (isEmptySummary(c)) {
    out.push(s.dim('  no change to status, plan, ledger, artifacts or spend'));
    return out.join('\n') + '\n';
  }
  if (c.status) out.push(`  status   ${colorStatus(s, c.status.from)} ${arrow} ${colorStatus(s, c.status.to)}`);
  if (c.phase) out.push(`  phase    ${c.phase.from || '(none)'} ${arrow} ${c.phase.to || '(none)'}`);
  if (c.current_step) out.push(`  step     ${stepNumber(c.current_step.from, steps)} ${arrow} ${stepNumber(c.current_step.to, steps)}`);
  for (const t of c.step_transitions)
    out.push(`  step ${t.id} ${s.dim(`(${t.name})`)}: ${colorStatus(s, t.from)} ${arrow} ${colorStatus(s, t.to)}`);
  for (const t of c.steps_added) out.push(`  ${s.green('+')} step ${t.id} ${s.dim(`(${t.name})`)}: ${t.status}`);
  for (const t of c.steps_removed) out.push(`  ${s.red('-')} step ${t.id} ${s.dim(`(${t.name})`)}: ${t.status}`);
  for (const r of c.results_changed) out.push(`  result of step ${r.id} ${s.dim(`(${r.name})`)} changed`);
  for (const e of c.effects_added)
    out.push(`  ${s.green('+')} effect ${e.id} ${e.type} ${s.dim(`key ${e.key}`)} (${colorStatus(s, e.status)})`);
  for (const e of c.effects_changed) {
    const what = e.from === e.to ? s.dim(`(${e.fields.join(', ')})`) : `${colorStatus(s, e.from)} ${arrow} ${colorStatus(s, e.to)}`;
    out.push(`  effect ${e.id} ${e.type} ${s.dim(`key ${e.key}`)}: ${what}`);
  }
  for (const e of c.effects_removed) out.push(`  ${s.red('-')} effect ${e.id} ${e.type} ${s.dim(`key ${e.key}`)}`);
  for (const a of c.artifacts_added) out.push(`  ${s.green('+')} artifact ${a.path} ${s.dim(shortSha(a.sha256))}`);
  for (const a of c.artifacts_changed) {
    const parts = [
      a.sha256.from !== a.sha256.to ? `sha ${shortSha(a.sha256.from)} ${arrow} ${shortSha(a.sha256.to)}` : '',
      a.size.from !== a.size.to ? `size ${a.size.from} ${arrow} ${a.size.to}` : '',
      a.status.from !== a.status.to ? `${a.status.from} ${arrow} ${a.status.to}` : '',
    ].filter(Boolean);
    out.push(`  artifact ${a.path}: ${parts.join(', ')}`);
  }
  for (const a of c.artifacts_removed) out.push(`  ${s.red('-')} artifact ${a.path}`);
  if (c.approval) out.push(`  approval ${c.approval.change}: ${c.approval.from ?? '-'} ${arrow} ${c.approval.to ?? '-'}`);
  for (const e of c.errors_added)
    out.push(`  ${s.red('+ error')} ${e.step_id ? `[${e.step_id}] ` : ''}${e.what}${e.fix ? s.dim(` (fix: ${e.fix})`) : ''}`);
  if (c.resume_hint) out.push(`  resume hint: ${c.resume_hint.to ? inlineJson(c.resume_hint.to, 100) : s.dim('(cleared)')}`);
  const sp = c.spend;
  if (Object.values(sp).some((v) => v !== 0)) {
    out.push(
      `  spend    ${signed(sp.tokens_in)} tokens in, ${signed(sp.tokens_out)} out, ${signed(sp.cost_usd, formatCost)}, ${signed(sp.elapsed_ms, formatDuration)}`,
    );
  }
  return out.join('\n') + '\n';
}

/** The structured diff as one line per field: `~ /plan/1/status: "running" → "done"`. */
export function renderEntries(s: Style, entries: readonly StructuredDiffEntry[]): string {
  if (entries.length === 0) return s.dim('  (no field changed)') + '\n';
  return (
    entries
      .map((e) => {
        const where = e.path || '(whole checkpoint)';
        if (e.op === 'add') return `  ${s.green('+')} ${where}: ${s.green(inlineJson(e.after))}`;
        if (e.op === 'remove') return `  ${s.red('-')} ${where}: ${s.red(inlineJson(e.before))}`;
        return `  ${s.yellow('~')} ${where}: ${s.red(inlineJson(e.before, 60))} ${s.dim('→')} ${s.green(inlineJson(e.after, 60))}`;
      })
      .join('\n') + '\n'
  );
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('diff')
    .description('show what changed between two versions of a task: a summary, then field by field')
    .argument('<DIR>', SOURCE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .argument('<A>', 'the earlier version (a number or "latest")')
    .argument('<B>', 'the later version (a number or "latest")')
    .option('--json', 'print {task_id, a, b, summary, entries}')
    .option('--exit-code', 'exit with 1 when the versions differ, like git diff --exit-code')
    .addHelpText(
      'after',
      '\nExit status: 0 when both versions were read (whether or not they differ; see --exit-code),\n' +
        '1 when a version cannot be read, 2 for an unknown task or version.',
    )
    .action(async (dir: string, taskId: string, aText: string, bText: string, opts: { json?: boolean; exitCode?: boolean }) => {
      const { source: store, entry } = await requireSourceTask(ctx, dir, taskId);
      const latest = entry.checkpoint?.version ?? null;
      const a = parseVersion(aText, latest);
      const b = parseVersion(bText, latest);
      const read = async (v: number): Promise<Checkpoint | null> => {
        if (entry.checkpoint?.version === v) return entry.checkpoint;
        try {
          return await store.readVersion(entry.task_id, v);
        } catch (err) {
          if (!(err instanceof TaskReadError)) throw err;
          ctx.io.err(`version ${v} of ${taskId} cannot be read:\n`);
          for (const p of err.problems) ctx.io.err(`  ${formatProblem(ctx.errStyle, p)}\n`);
          return null;
        }
      };
      const [from, to] = [await read(a), await read(b)];
      if (!from || !to) return ctx.fail(ExitCode.problems);
      const summary = summarizeChange(from, to);
      const entries = structuredDiff(from, to);
      // A LangGraph thread's conversation lives outside the checkpoint: its change is told from the messages of both.
      const [lgFrom, lgTo] = [langGraphPartOf(from), langGraphPartOf(to)];
      const langgraph =
        lgFrom && lgTo
          ? summarizeLangGraphChange(lgFrom, lgTo, await store.readHistory(entry.task_id, a), await store.readHistory(entry.task_id, b))
          : null;
      if (opts.json) ctx.io.out(formatJson({ task_id: entry.task_id, a, b, summary, entries, ...(langgraph ? { langgraph } : {}) }));
      else
        ctx.io.out(
          `${renderSummary(ctx.style, summary, to.total_steps || to.plan.length)}\n${langgraph ? `${renderLangGraphChange(ctx.style, langgraph)}\n` : ''}${ctx.style.bold('Fields')}\n${renderEntries(ctx.style, entries)}`,
        );
      if (opts.exitCode && entries.length > 0) ctx.fail(ExitCode.problems);
    });
}

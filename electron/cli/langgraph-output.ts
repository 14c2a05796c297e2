/**
 * The LangGraph parts of `show` and `diff`: a thread's checkpoint id and
 * parent, the nodes due next, what it waits for a human about, its channels
 * and pending writes; and, between two versions, the messages added, the
 * channels changed and the next nodes, in words.
 */
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import type { LangGraphChange } from '../../shared/diff/langgraph-change.js';
import { inlineJson, type Style } from './output.js';

interface LangGraphView {
  checkpoint_id?: string;
  parent_checkpoint_id?: string | null;
  parent_version?: number | null;
  next?: string[];
  waiting_for_human?: unknown[];
  channels?: Record<string, unknown>;
  pending_writes?: { task_id: string; channel: string; value: unknown }[];
  messages?: number;
}

/** The `langgraph` part of a checkpoint, when it has one. */
function viewOf(cp: Checkpoint): LangGraphView | null {
  const lg = (cp as { langgraph?: unknown }).langgraph;
  return typeof lg === 'object' && lg !== null ? (lg as LangGraphView) : null;
}

/** The LangGraph section of `show`; empty for a native checkpoint. */
export function renderLangGraphState(s: Style, cp: Checkpoint): string {
  const lg = viewOf(cp);
  if (!lg) return '';
  const out: string[] = ['', s.bold('LangGraph')];
  const field = (label: string, value: string) => out.push(`  ${s.dim(label.padEnd(12))} ${value}`);
  field('checkpoint', lg.checkpoint_id ?? '-');
  field(
    'parent',
    lg.parent_checkpoint_id
      ? `${lg.parent_checkpoint_id}${lg.parent_version ? s.dim(` (version ${lg.parent_version})`) : ''}`
      : s.dim('(none)'),
  );
  field('next', lg.next?.length ? lg.next.join(', ') : s.dim('(nothing: the run is over)'));
  for (const value of lg.waiting_for_human ?? []) field('waiting for', s.yellow(`a human: ${inlineJson(value, 200)}`));
  out.push('', s.bold('  Channels'));
  const channels = Object.entries(lg.channels ?? {});
  if (lg.messages)
    out.push(
      `    ${'messages'.padEnd(20)} ${s.dim(`${lg.messages} message${lg.messages === 1 ? '' : 's'} (waystation show --json, or the Messages tab)`)}`,
    );
  if (channels.length === 0 && !lg.messages) out.push(s.dim('    (none)'));
  for (const [name, value] of channels) out.push(`    ${name.padEnd(20)} ${inlineJson(value, 100)}`);
  const writes = lg.pending_writes ?? [];
  if (writes.length > 0) {
    out.push('', s.bold('  Pending writes'));
    for (const w of writes) out.push(`    ${w.channel.padEnd(20)} ${inlineJson(w.value, 80)} ${s.dim(`task ${w.task_id}`)}`);
  }
  return out.join('\n') + '\n';
}

const firstLine = (text: string, max = 80) => {
  const line = text.split('\n')[0];
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** The LangGraph words of `diff`. */
export function renderLangGraphChange(s: Style, c: LangGraphChange): string {
  const out: string[] = [s.bold('LangGraph')];
  const arrow = s.dim('→');
  for (const m of c.messages_added) out.push(`  ${s.green('+')} message ${s.bold(m.role)}: ${firstLine(m.content)}`);
  for (const m of c.messages_removed) out.push(`  ${s.red('-')} message ${s.bold(m.role)}: ${firstLine(m.content)}`);
  for (const name of c.channels_added) out.push(`  ${s.green('+')} channel ${name}`);
  for (const name of c.channels_changed) out.push(`  ${s.yellow('~')} channel ${name} changed`);
  for (const name of c.channels_removed) out.push(`  ${s.red('-')} channel ${name}`);
  if (c.next) out.push(`  next     ${c.next.from.join(', ') || '(none)'} ${arrow} ${c.next.to.join(', ') || '(none)'}`);
  if (c.interrupt) {
    const text = (v: unknown[]) => (v.length ? v.map((x) => inlineJson(x, 60)).join('; ') : '(none)');
    out.push(`  waiting for a human: ${text(c.interrupt.from)} ${arrow} ${text(c.interrupt.to)}`);
  }
  if (out.length === 1) out.push(s.dim('  no message, channel or next node changed'));
  return out.join('\n') + '\n';
}

/**
 * The difference between two checkpoints of a LangGraph thread in its own
 * words: the messages added or dropped, the channels added, changed and
 * removed, the nodes due next and the interrupts (shared/diff/langgraph-change.ts).
 */
import type { DiffResult } from '../../../shared/api/contract.js';
import type { ReactNode } from 'react';
import { previewValue } from './json-view.js';

type Change = NonNullable<DiffResult['langgraph']>;

const list = (names: string[]) => (names.length ? names.join(', ') : null);
const nodes = (n: string[]) => (n.length ? n.join(', ') : 'none (done)');

export function LangGraphDiffWords({ change, a, b }: { change: Change; a: number; b: number }) {
  const rows: { label: string; body: ReactNode }[] = [];
  const messages = (label: string, items: Change['messages_added']) => {
    if (!items.length) return;
    rows.push({
      label,
      body: (
        <ul className="plain" aria-label={label}>
          {items.map((m, i) => (
            <li key={`${m.id ?? ''}-${i}`}>
              <strong>{m.role}</strong>: {previewValue(m.content)}
            </li>
          ))}
        </ul>
      ),
    });
  };
  messages('Messages added', change.messages_added);
  messages('Messages removed', change.messages_removed);
  const added = list(change.channels_added);
  const changed = list(change.channels_changed);
  const removed = list(change.channels_removed);
  if (added) rows.push({ label: 'Channels added', body: added });
  if (changed) rows.push({ label: 'Channels changed', body: changed });
  if (removed) rows.push({ label: 'Channels removed', body: removed });
  if (change.next) rows.push({ label: 'Next nodes', body: `${nodes(change.next.from)} → ${nodes(change.next.to)}` });
  if (change.interrupt) {
    rows.push({
      label: 'Waiting for a human',
      body: change.interrupt.to.length
        ? `asks ${change.interrupt.to.map((v) => previewValue(v)).join('; ')}`
        : 'answered: no longer waiting',
    });
  }
  return (
    <section className="diff-summary" aria-label={`LangGraph changes from version ${a} to version ${b}`}>
      <h3 className="section-title">
        LangGraph: checkpoint {a} → {b}
      </h3>
      {rows.length === 0 ? (
        <p className="empty-inline">The thread&apos;s messages, channels and next nodes are the same.</p>
      ) : (
        <dl className="kv summary-kv">
          {rows.map((r) => (
            <div key={r.label} className="kv-row">
              <dt>{r.label}</dt>
              <dd>{r.body}</dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}

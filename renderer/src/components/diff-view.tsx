/**
 * The difference between two versions: first what it means (phase, step
 * transitions, ledger, artifacts, spend), then every changed field side by side.
 */
import { useMemo, useState, type ReactNode } from 'react';
import type { DiffResult } from '../../../shared/api/contract.js';
import type { StructuredDiffEntry } from '../../../shared/diff/semantic-summary.js';
import { StatusBadge } from './status-badge.js';
import { ValueView, previewValue } from './json-view.js';
import { formatCount, formatDuration, stepNumber } from './format.js';
import { LangGraphDiffWords } from './langgraph-diff-words.js';
import { fillDirectory } from '../../../shared/checkpoint/fill-directory.js';

/**
 * `root`: the open directory, which the hints name as `<DIR>`; shown in its place, as the task view shows them.
 * `steps`: how many steps the task's plan has, so the current step reads as the plan numbers it (`step 3 of 4`).
 */
export function DiffView({ diff, root = null, steps = null }: { diff: DiffResult; root?: string | null; steps?: number | null }) {
  return (
    <div className="diff-view">
      {diff.langgraph && <LangGraphDiffWords change={diff.langgraph} a={diff.a} b={diff.b} />}
      <SemanticSummary diff={diff} root={root} steps={steps} />
      <SideBySide entries={diff.entries} a={diff.a} b={diff.b} />
    </div>
  );
}

function Move({ from, to }: { from: ReactNode; to: ReactNode }) {
  return (
    <span className="move">
      <span className="from">{from}</span>
      <span aria-label="to" className="arrow">
        →
      </span>
      <span className="to">{to}</span>
    </span>
  );
}

function signed(n: number, fmt: (n: number) => string): string {
  return n === 0 ? '±0' : `${n > 0 ? '+' : '−'}${fmt(Math.abs(n))}`;
}

function SemanticSummary({ diff, root, steps }: { diff: DiffResult; root: string | null; steps: number | null }) {
  const s = diff.summary;
  const items: { label: string; body: ReactNode }[] = [];
  if (s.status) items.push({ label: 'Status', body: <Move from={s.status.from} to={s.status.to} /> });
  if (s.phase) items.push({ label: 'Phase', body: <Move from={s.phase.from || '—'} to={s.phase.to || '—'} /> });
  // current_step is an index from 0; the plan numbers its steps from 1.
  if (s.current_step)
    items.push({
      label: 'Current step',
      body: <Move from={stepNumber(s.current_step.from, steps)} to={stepNumber(s.current_step.to, steps)} />,
    });
  if (s.step_transitions.length) {
    items.push({
      label: 'Step transitions',
      body: (
        <ul className="plain" aria-label="Step transitions">
          {s.step_transitions.map((t) => (
            <li key={t.id}>
              <span className="step-name">{t.name || t.id}</span>{' '}
              <Move from={<StatusBadge status={t.from} />} to={<StatusBadge status={t.to} />} />
            </li>
          ))}
        </ul>
      ),
    });
  }
  if (s.steps_added.length) items.push({ label: 'Steps added', body: s.steps_added.map((x) => x.name || x.id).join(', ') });
  if (s.steps_removed.length) items.push({ label: 'Steps removed', body: s.steps_removed.map((x) => x.name || x.id).join(', ') });
  if (s.results_changed.length) items.push({ label: 'Results changed', body: s.results_changed.map((x) => x.name || x.id).join(', ') });
  const ledger = [
    ...s.effects_added.map((e) => (
      <li key={`a-${e.id}`}>
        <span className="diff-add-text">added</span> {e.type} <span className="mono small">{e.key}</span> <StatusBadge status={e.status} />
      </li>
    )),
    ...s.effects_changed.map((e) => (
      <li key={`c-${e.id}`}>
        {e.type} <span className="mono small">{e.key}</span>{' '}
        <Move from={<StatusBadge status={e.from} />} to={<StatusBadge status={e.to} />} />
        {e.fields.length > 0 && <span className="muted small"> ({e.fields.join(', ')})</span>}
      </li>
    )),
    ...s.effects_removed.map((e) => (
      <li key={`r-${e.id}`}>
        <span className="diff-remove-text">removed</span> {e.type} <span className="mono small">{e.key}</span>
      </li>
    )),
  ];
  if (ledger.length) items.push({ label: 'Side effects', body: <ul className="plain">{ledger}</ul> });
  const artifacts = [
    ...s.artifacts_added.map((a) => (
      <li key={`a-${a.path}`}>
        <span className="diff-add-text">added</span> <span className="mono">{a.path}</span>
      </li>
    )),
    ...s.artifacts_changed.map((a) => (
      <li key={`c-${a.path}`}>
        <span className="mono">{a.path}</span> rewritten ({a.size.from} → {a.size.to} bytes)
      </li>
    )),
    ...s.artifacts_removed.map((a) => (
      <li key={`r-${a.path}`}>
        <span className="diff-remove-text">removed</span> <span className="mono">{a.path}</span>
      </li>
    )),
  ];
  if (artifacts.length) items.push({ label: 'Artifacts', body: <ul className="plain">{artifacts}</ul> });
  const sp = s.spend;
  if (sp.tokens_in || sp.tokens_out || sp.cost_usd || sp.elapsed_ms) {
    items.push({
      label: 'Spend',
      body: `tokens ${signed(sp.tokens_in, formatCount)} in, ${signed(sp.tokens_out, formatCount)} out · ${signed(sp.cost_usd, (n) => `$${n.toFixed(4)}`)} · ${signed(sp.elapsed_ms, formatDuration)}`,
    });
  }
  if (s.approval) items.push({ label: 'Approval', body: `${s.approval.change}${s.approval.to ? ` (${s.approval.to})` : ''}` });
  if (s.errors_added.length) {
    items.push({
      label: 'Errors recorded',
      body: (
        <ul className="plain">
          {s.errors_added.map((e, i) => (
            <li key={i}>{e.what}</li>
          ))}
        </ul>
      ),
    });
  }
  if (s.resume_hint) {
    const { from, to } = s.resume_hint;
    items.push({
      label: 'Resume hint',
      body: <Move from={from ? fillDirectory(from, root) : '—'} to={to ? fillDirectory(to, root) : '—'} />,
    });
  }

  return (
    <section className="diff-summary" aria-label={`Summary of changes from version ${diff.a} to version ${diff.b}`}>
      <h3 className="section-title">
        Version {diff.a} → {diff.b}
        <span className="muted small">
          {' '}
          · written by {s.source.kind}
          {s.source.actor ? ` (${s.source.actor})` : ''}
          {s.source.note ? `: ${s.source.note}` : ''}
        </span>
      </h3>
      {items.length === 0 ? (
        <p className="empty-inline">No meaningful change: only bookkeeping fields differ.</p>
      ) : (
        <dl className="kv summary-kv">
          {items.map((it) => (
            <div key={it.label} className="kv-row">
              <dt>{it.label}</dt>
              <dd>{it.body}</dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}

/** Noise a reviewer rarely wants first: timestamps that change on every save. */
const NOISY = /\/(updated_at|at|heartbeat_at)$/;

function SideBySide({ entries, a, b }: { entries: StructuredDiffEntry[]; a: number; b: number }) {
  const [query, setQuery] = useState('');
  const [showNoise, setShowNoise] = useState(false);
  const shown = useMemo(
    () => entries.filter((e) => (showNoise || !NOISY.test(e.path)) && (!query || e.path.toLowerCase().includes(query.toLowerCase()))),
    [entries, query, showNoise],
  );
  return (
    <section aria-label="Field changes" className="side-by-side">
      <div className="panel-toolbar">
        <h3 className="section-title">Field changes ({entries.length})</h3>
        <span className="spacer" />
        <input
          type="search"
          aria-label="Filter changed paths"
          placeholder="Filter paths"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <label className="check">
          <input type="checkbox" checked={showNoise} onChange={(e) => setShowNoise(e.target.checked)} /> Show timestamps
        </label>
      </div>
      {shown.length === 0 ? (
        <p className="empty-inline">{entries.length === 0 ? 'The two versions are identical.' : 'No change matches this filter.'}</p>
      ) : (
        <table className="grid diff-table" aria-label={`Changes from version ${a} to version ${b}`}>
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Version {a}</th>
              <th scope="col">Version {b}</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e, i) => (
              <tr key={`${e.path}-${i}`} className={`diff-${e.op}`}>
                <td className="mono small">{e.path || '(whole document)'}</td>
                <td className="diff-before">{e.op === 'add' ? <span className="muted">—</span> : <Cell value={e.before} />}</td>
                <td className="diff-after">{e.op === 'remove' ? <span className="muted">—</span> : <Cell value={e.after} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** A scalar's JSON longer than this folds: its start shows, the whole opens on a click. */
const SHORT_SCALAR = 120;

function Cell({ value }: { value: unknown }) {
  // Scalars are shown as JSON, quotes included, so "1" and 1 read differently.
  if (value === undefined) return <span className="mono small">—</span>;
  if (value === null || typeof value !== 'object') {
    const json = JSON.stringify(value);
    if (json.length <= SHORT_SCALAR) return <span className="mono small diff-scalar">{json}</span>;
    return (
      <details className="cell-details">
        <summary>
          <span className="mono small">{previewValue(json, 60)}</span> <span className="muted small">({json.length} characters)</span>
        </summary>
        <pre className="mono small diff-scalar-whole">{json}</pre>
      </details>
    );
  }
  return (
    <details className="cell-details">
      <summary>
        <span className="mono small">{previewValue(value, 60)}</span>
      </summary>
      <ValueView value={value} />
    </details>
  );
}

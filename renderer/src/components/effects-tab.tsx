/** The side-effect ledger: what the task did to the world, and how each uncertain entry was settled. */
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { StatusBadge } from './status-badge.js';
import { ValueView, previewValue } from './json-view.js';
import { formatTime } from './format.js';

export function EffectsTab({ checkpoint }: { checkpoint: Checkpoint }) {
  if (checkpoint.side_effects.length === 0) {
    return <p className="empty-inline">No side effects recorded: the task has not called anything outside itself.</p>;
  }
  return (
    <table className="grid" aria-label="Side-effect ledger">
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Idempotency key</th>
          <th scope="col">Status</th>
          <th scope="col">Step</th>
          <th scope="col">Request</th>
          <th scope="col">Outcome</th>
          <th scope="col">Reconciliation</th>
        </tr>
      </thead>
      <tbody>
        {checkpoint.side_effects.map((e) => (
          <tr key={e.id}>
            <td>{e.type}</td>
            <td className="mono small">{e.idempotency_key}</td>
            <td>
              <StatusBadge status={e.status} />
              {e.attempts > 1 && <div className="muted small">{e.attempts} attempts</div>}
            </td>
            <td className="mono">{e.step_id ?? '—'}</td>
            <td>
              <Expandable value={e.request} label={`Request of ${e.type} ${e.id}`} />
            </td>
            <td>
              <Expandable value={e.outcome} label={`Outcome of ${e.type} ${e.id}`} />
            </td>
            <td title={e.updated_at ? `updated ${formatTime(e.updated_at)}` : undefined}>{e.reconciliation ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Expandable({ value, label }: { value: unknown; label: string }) {
  if (value === undefined || value === null) return <span className="muted">—</span>;
  return (
    <details className="cell-details">
      {/* The name read out holds the preview seen (WCAG 2.5.3, label in name): what it is, then what it shows. */}
      <summary>
        <span className="visually-hidden">{label}: </span>
        <span className="mono small">{previewValue(value, 48)}</span>
      </summary>
      <ValueView value={value} label={label} />
    </details>
  );
}

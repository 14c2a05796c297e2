/** Run metadata and a per-step chart of tokens and latency (hand-made SVG, no chart library). */
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { formatCount, formatDuration, formatTime } from './format.js';
import { ActivityFeed } from './activity-feed.js';

export interface StepMetrics {
  id: string;
  name: string;
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  calls: number;
}

/**
 * Tokens and latency per plan step.
 *
 * The LLM call log is the finer record, so it wins when it names the step;
 * otherwise the step's own counters are used.
 */
export function stepMetrics(cp: Checkpoint): StepMetrics[] {
  const calls = cp.run.llm_calls ?? [];
  return cp.plan.map((s) => {
    const mine = calls.filter((c) => c.step_id === s.id);
    const sum = (f: (c: (typeof calls)[number]) => number) => mine.reduce((n, c) => n + f(c), 0);
    return {
      id: s.id,
      name: s.name || s.id,
      tokensIn: mine.length ? sum((c) => c.tokens_in) : (s.tokens_in ?? 0),
      tokensOut: mine.length ? sum((c) => c.tokens_out) : (s.tokens_out ?? 0),
      latencyMs: mine.length ? sum((c) => c.latency_ms) : (s.elapsed_ms ?? 0),
      calls: mine.length,
    };
  });
}

export function RunTab({ checkpoint }: { checkpoint: Checkpoint }) {
  const run = checkpoint.run;
  const metrics = stepMetrics(checkpoint);
  const retries = (run.llm_calls ?? []).reduce((n, c) => n + (c.retries ?? 0), 0);
  return (
    <div className="run-tab">
      <dl className="stats" aria-label="Run metadata">
        <Stat label="Model" value={run.model ?? '—'} />
        <Stat label="Tokens in" value={formatCount(run.tokens_in)} />
        <Stat label="Tokens out" value={formatCount(run.tokens_out)} />
        <Stat label="Cost" value={`$${run.cost_usd.toFixed(4)}`} />
        <Stat label="Elapsed" value={formatDuration(run.elapsed_ms)} />
        <Stat label="LLM calls" value={`${run.llm_calls?.length ?? 0}${retries ? ` (${retries} retries)` : ''}`} />
        <Stat label="Created" value={formatTime(run.created_at)} />
        <Stat label="Updated" value={formatTime(run.updated_at)} />
      </dl>
      {metrics.length > 0 && (
        <div className="charts">
          <BarChart
            title="Tokens per step"
            steps={metrics}
            series={[
              { key: 'in', label: 'tokens in', className: 'series-a', get: (m) => m.tokensIn },
              { key: 'out', label: 'tokens out', className: 'series-b', get: (m) => m.tokensOut },
            ]}
            format={formatCount}
          />
          <BarChart
            title="Latency per step"
            steps={metrics}
            series={[{ key: 'lat', label: 'latency', className: 'series-c', get: (m) => m.latencyMs }]}
            format={formatDuration}
          />
        </div>
      )}
      <h3 className="section-title">Live activity</h3>
      <ActivityFeed taskId={checkpoint.task_id} limit={50} />
    </div>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

interface Series {
  key: string;
  label: string;
  className: string;
  get(m: StepMetrics): number;
}

/** Stacked columns, one per step; the numbers are also in each column's tooltip for exact reading. */
function BarChart({ title, steps, series, format }: { title: string; steps: StepMetrics[]; series: Series[]; format(n: number): string }) {
  const W = 480;
  const H = 160;
  const pad = { l: 44, r: 8, t: 10, b: 34 };
  const totals = steps.map((m) => series.reduce((n, s) => n + s.get(m), 0));
  const max = Math.max(1, ...totals);
  const slot = (W - pad.l - pad.r) / steps.length;
  const bar = Math.max(4, Math.min(36, slot * 0.6));
  const y = (v: number) => H - pad.b - (v / max) * (H - pad.t - pad.b);
  const summary = steps.map((m, i) => `${m.name}: ${format(totals[i])}`).join(', ');
  return (
    <figure className="chart">
      <figcaption>
        {title}
        <span className="legend">
          {series.map((s) => (
            <span key={s.key} className="legend-item">
              <svg width="10" height="10" aria-hidden="true">
                <rect width="10" height="10" className={s.className} />
              </svg>
              {s.label}
            </span>
          ))}
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${summary}`} preserveAspectRatio="xMidYMid meet">
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={pad.l} x2={W - pad.r} y1={y(max * f)} y2={y(max * f)} className="gridline" />
            <text x={pad.l - 6} y={y(max * f) + 4} className="axis" textAnchor="end">
              {format(Math.round(max * f))}
            </text>
          </g>
        ))}
        {steps.map((m, i) => {
          const x = pad.l + slot * i + (slot - bar) / 2;
          let base = 0;
          return (
            <g key={m.id}>
              <title>{`${m.name}: ${series.map((s) => `${s.label} ${format(s.get(m))}`).join(', ')}`}</title>
              {series.map((s) => {
                const v = s.get(m);
                const top = y(base + v);
                const rect = (
                  <rect key={s.key} x={x} y={top} width={bar} height={Math.max(0, y(base) - top)} className={s.className} rx={2} />
                );
                base += v;
                return rect;
              })}
              <text x={x + bar / 2} y={H - pad.b + 14} className="axis" textAnchor="middle">
                {m.name.length > 10 ? `${m.name.slice(0, 9)}…` : m.name}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

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

/**
 * One row per step: its whole name, a stacked bar scaled to the largest step,
 * and the exact figure. Rows wrap their names instead of cutting them, and a
 * chart with nothing recorded says so instead of drawing an empty axis.
 */
function BarChart({ title, steps, series, format }: { title: string; steps: StepMetrics[]; series: Series[]; format(n: number): string }) {
  const totals = steps.map((m) => series.reduce((n, s) => n + s.get(m), 0));
  // A fold, not Math.max(...totals): spread into arguments, some 130,000 steps overflow the stack.
  const max = totals.reduce((a, b) => Math.max(a, b), 0);
  const summary = steps.map((m, i) => `${m.name}: ${format(totals[i])}`).join(', ');
  const what = series.map((s) => s.label).join(' and ');
  return (
    <figure className="chart">
      <figcaption>
        {title}
        {series.length > 1 && (
          <span className="legend">
            {series.map((s) => (
              <span key={s.key} className="legend-item">
                <span className={`legend-swatch ${s.className}`} aria-hidden="true" />
                {s.label}
              </span>
            ))}
          </span>
        )}
      </figcaption>
      {max === 0 ? (
        <p className="muted small">No {what} recorded for any step.</p>
      ) : (
        <div className="bar-rows" role="img" aria-label={`${title}: ${summary}`}>
          {steps.map((m, i) => (
            <div key={m.id} className="bar-row" style={{ display: 'contents' }}>
              <span className="bar-label">{m.name}</span>
              <span className="bar-track" title={`${m.name}: ${series.map((s) => `${s.label} ${format(s.get(m))}`).join(', ')}`}>
                {series.map((s) => (
                  <span key={s.key} className={s.className} style={{ width: `${(s.get(m) / max) * 100}%` }} />
                ))}
              </span>
              <span className="bar-value">{format(totals[i])}</span>
            </div>
          ))}
        </div>
      )}
    </figure>
  );
}

/**
 * What every torture scenario takes and gives back, so the long run
 * (`npm run torture`) and the short vitest versions call the same code.
 */

export interface ScenarioOptions {
  /** How many runs (crashes, power cuts, corpus entries, requests...) at this scale. */
  runs: number;
  /** Seed of every random choice, so a failing run replays exactly. */
  seed: number;
  /** Progress lines for a human watching the long run. */
  log: (line: string) => void;
  /** Processes to run at once, where the scenario starts processes. Default: the number of cores. */
  parallel?: number;
}

/** One kind of promise a scenario checks, and how often it was broken. */
export interface ViolationCount {
  /** What must never happen, e.g. "done step executed again". */
  check: string;
  count: number;
}

export interface ScenarioReport {
  name: string;
  runs: number;
  faultsInjected: number;
  /** Every check the scenario makes, with its count (0 when the promise held). */
  violations: ViolationCount[];
  /** The first few violations, described, for whoever has to fix them. */
  examples: string[];
  /** Extra figures worth printing (kills by target, outcomes seen...). */
  figures: Record<string, number | string>;
  seed: number;
  elapsedMs: number;
}

export type Scenario = (opts: ScenarioOptions) => Promise<ScenarioReport>;

/**
 * A tally of checks and violations for one scenario.
 *
 * Every check is declared up front, so a report lists it with 0 even when it
 * never fired: a zero that was looked for, not a check that was forgotten.
 */
export class Tally {
  private readonly counts = new Map<string, number>();
  readonly examples: string[] = [];
  readonly figures: Record<string, number | string> = {};
  faults = 0;
  runs = 0;
  private readonly started = Date.now();

  constructor(
    readonly name: string,
    checks: readonly string[],
    private readonly seed: number,
  ) {
    for (const c of checks) this.counts.set(c, 0);
  }

  /** Record a broken promise; `detail` says which run and what was seen. */
  violation(check: string, detail: string): void {
    if (!this.counts.has(check)) throw new Error(`scenario ${this.name} reported undeclared check "${check}"`);
    const n = this.counts.get(check)! + 1;
    this.counts.set(check, n);
    // A few of each kind, so one frequent failure cannot hide a rarer one.
    if (n <= 5) this.examples.push(`${check}: ${detail}`);
  }

  /** Add to a named figure. */
  bump(figure: string, by = 1): void {
    this.figures[figure] = Number(this.figures[figure] ?? 0) + by;
  }

  get total(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }

  report(): ScenarioReport {
    return {
      name: this.name,
      runs: this.runs,
      faultsInjected: this.faults,
      violations: [...this.counts].map(([check, count]) => ({ check, count })),
      examples: this.examples,
      figures: this.figures,
      seed: this.seed,
      elapsedMs: Date.now() - this.started,
    };
  }
}

/** An integer in [0, n). */
export function pick(random: () => number, n: number): number {
  return Math.floor(random() * n);
}

/** Run `fn` over 0..count-1 with at most `limit` in flight. */
export async function forEachLimit(count: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(limit, count)) }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

/** Reject with a "hang" error when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HangError(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]);
}

export class HangError extends Error {}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The environment the suite runs agents in: the offline model answering after `latencyMs` (no API key is
 * handed on, so no run reaches a real model), no colour in what the CLI prints, and `extra` over that.
 */
export function agentEnv(latencyMs: number, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, WAYSTATION_OFFLINE_LATENCY_MS: String(latencyMs), NO_COLOR: '1', ...extra };
  delete env.OPENAI_API_KEY;
  return env;
}

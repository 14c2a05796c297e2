/**
 * Estimated cost of a call, from a small table of list prices (USD per million tokens).
 *
 * It is an estimate for the run summary, not a bill: prices change, and a
 * gateway may charge differently. `WAYSTATION_PRICE_PER_MTOK="in,out"`
 * overrides the table for models it does not know or prices it has wrong.
 */

const PRICES: Record<string, [number, number]> = {
  'gpt-4o-mini': [0.15, 0.6],
  'gpt-4o': [2.5, 10],
  'gpt-4.1': [2, 8],
  'gpt-4.1-mini': [0.4, 1.6],
  'gpt-4.1-nano': [0.1, 0.4],
  'gpt-5': [1.25, 10],
  'gpt-5-mini': [0.25, 2],
  'gpt-5-nano': [0.05, 0.4],
  'waystation-offline': [0, 0],
};

function override(env: NodeJS.ProcessEnv): [number, number] | null {
  const raw = env.WAYSTATION_PRICE_PER_MTOK;
  if (!raw) return null;
  const [a, b] = raw.split(',').map((s) => Number(s.trim()));
  return Number.isFinite(a) && Number.isFinite(b) && a >= 0 && b >= 0 ? [a, b] : null;
}

/** Estimated USD cost of one call; 0 for a model with no known price. */
export function estimateCostUsd(model: string, tokensIn: number, tokensOut: number, env: NodeJS.ProcessEnv = process.env): number {
  // Dated snapshots (gpt-4o-mini-2024-07-18) cost what their family costs.
  const price = override(env) ?? PRICES[model] ?? PRICES[model.replace(/-\d{4}-\d{2}-\d{2}$/, '')] ?? [0, 0];
  return (tokensIn * price[0] + tokensOut * price[1]) / 1_000_000;
}

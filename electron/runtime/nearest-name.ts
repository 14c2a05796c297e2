/**
 * The name a mistyped one was most likely meant to be, for "did you mean":
 * an agent's option (unknown-options.ts) or an agent's name (agent-catalog.ts).
 */

/** The name in `names` nearest `name` (at most two edits away, or one it starts or ends); undefined when none is. */
export function nearestName(name: string, names: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of names) {
    const distance = editDistance(name.toLowerCase(), key.toLowerCase());
    const close = distance <= 2 || key.startsWith(name) || name.startsWith(key);
    if (close && (!best || distance < best.distance)) best = { key, distance };
  }
  return best?.key;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    row = next;
  }
  return row[b.length];
}

/**
 * Canonical JSON: object keys sorted, no whitespace.
 *
 * Blobs are named by the sha256 of their bytes, so the same value must always
 * serialise to the same bytes, whatever key order its producer used.
 */

/** Serialise a JSON value canonically; `undefined` members are dropped as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  write(value, parts);
  return parts.join('');
}

function write(value: unknown, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    // Top-level undefined or a function has no JSON form; null keeps the output parseable.
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      const item = value[i];
      write(item === undefined || typeof item === 'function' ? null : item, out);
    }
    out.push(']');
    return;
  }
  const obj = value as Record<string, unknown>;
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
    write((obj as { toJSON: () => unknown }).toJSON(), out);
    return;
  }
  out.push('{');
  let first = true;
  for (const key of Object.keys(obj).sort()) {
    const item = obj[key];
    if (item === undefined || typeof item === 'function') continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(key), ':');
    write(item, out);
  }
  out.push('}');
}

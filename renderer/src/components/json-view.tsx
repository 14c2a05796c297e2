/**
 * A read-only JSON tree. Objects and arrays fold; anything large starts
 * folded and long strings are clipped with a "show all", so a multi-megabyte
 * step result never freezes the view.
 */
import { useState } from 'react';

const LARGE_CHILDREN = 20;
const LONG_STRING = 400;

/** Show a value: plain text for a string, a foldable tree for anything else. */
export function ValueView({ value, label }: { value: unknown; label?: string }) {
  if (typeof value === 'string') return <TextBlock text={value} label={label} />;
  return (
    <div className="json-view" role="tree" aria-label={label ?? 'JSON value'}>
      <JsonNode value={value} depth={0} name={null} />
    </div>
  );
}

function TextBlock({ text, label }: { text: string; label?: string }) {
  const [all, setAll] = useState(false);
  const long = text.length > LONG_STRING * 4;
  return (
    <div className="text-block" aria-label={label ?? 'Text value'} role="group">
      <pre>{all || !long ? text : `${text.slice(0, LONG_STRING * 4)}…`}</pre>
      {long && (
        <button type="button" className="link" onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all ${text.length.toLocaleString()} characters`}
        </button>
      )}
    </div>
  );
}

function childCount(v: unknown): number {
  if (Array.isArray(v)) return v.length;
  if (v && typeof v === 'object') return Object.keys(v).length;
  return 0;
}

function JsonNode({ value, depth, name }: { value: unknown; depth: number; name: string | null }) {
  const n = childCount(value);
  const isContainer = value !== null && typeof value === 'object';
  const [open, setOpen] = useState(depth < 2 && n <= LARGE_CHILDREN);
  const key = name !== null ? <span className="json-key">{name}: </span> : null;

  if (!isContainer) {
    return (
      <div className="json-row" role="treeitem" aria-selected={false} style={{ paddingLeft: depth * 14 }}>
        {key}
        <Scalar value={value} />
      </div>
    );
  }
  const isArray = Array.isArray(value);
  const entries: [string, unknown][] = isArray ? value.map((v, i) => [String(i), v]) : Object.entries(value as Record<string, unknown>);
  const summary = isArray ? `[${n} item${n === 1 ? '' : 's'}]` : `{${n} key${n === 1 ? '' : 's'}}`;
  return (
    <div role="treeitem" aria-expanded={open} aria-selected={false}>
      <div className="json-row" style={{ paddingLeft: depth * 14 }}>
        <button
          type="button"
          className="json-toggle"
          aria-label={`${open ? 'Collapse' : 'Expand'} ${name ?? 'value'}`}
          onClick={() => setOpen(!open)}
        >
          {open ? '▾' : '▸'}
        </button>
        {key}
        <span className="json-summary">{summary}</span>
      </div>
      {open && (
        <div role="group">
          {entries.map(([k, v]) => (
            <JsonNode key={k} value={v} depth={depth + 1} name={k} />
          ))}
        </div>
      )}
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  const [all, setAll] = useState(false);
  if (typeof value === 'string') {
    const long = value.length > LONG_STRING;
    return (
      <span className="json-string">
        “{all || !long ? value : `${value.slice(0, LONG_STRING)}…`}”
        {long && (
          <button type="button" className="link" onClick={() => setAll(!all)}>
            {all ? 'less' : `+${(value.length - LONG_STRING).toLocaleString()} chars`}
          </button>
        )}
      </span>
    );
  }
  if (typeof value === 'number') return <span className="json-number">{value}</span>;
  if (typeof value === 'boolean') return <span className="json-bool">{String(value)}</span>;
  if (value === null) return <span className="json-null">null</span>;
  return <span className="json-null">undefined</span>;
}

/** One-line preview of a value for table cells. */
export function previewValue(value: unknown, max = 80): string {
  if (value === undefined) return '—';
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

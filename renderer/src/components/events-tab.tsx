/**
 * The task's event log as a timeline: what `waystation tail` prints, one line
 * an event, newest last, following the tail while the task runs. A person
 * narrows it by type and by text (a step id, a word of the data).
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { TaskEventEntry } from '../../../shared/api/contract.js';
import { useAppStore } from '../store/app-store.js';
import { previewValue } from './json-view.js';
import { formatTime } from './format.js';

/** What an event's type reads as in the timeline. */
const TYPE_LABEL: Record<string, string> = {
  version: 'version',
  'step-start': 'step started',
  'step-finish': 'step finished',
  effect: 'side effect',
  runner: 'runner',
  log: 'log',
};

/** The text an event is searched by: what its line shows. */
function searchText(e: TaskEventEntry): string {
  return [e.id, e.type, e.step_id, e.version, e.data ? JSON.stringify(e.data) : ''].join(' ').toLowerCase();
}

export function EventsTab({ taskId }: { taskId: string }) {
  const { events, loadEvents } = useAppStore(useShallow((s) => ({ events: s.events, loadEvents: s.loadEvents })));
  const [hidden, setHidden] = useState<ReadonlySet<string>>(new Set());
  const [query, setQuery] = useState('');
  const [follow, setFollow] = useState(true);
  const list = useRef<HTMLDivElement>(null);

  useEffect(() => {
    void loadEvents();
  }, [taskId, loadEvents]);

  const mine = events.taskId === taskId ? events : null;
  const items = useMemo(() => mine?.items ?? [], [mine]);
  const types = useMemo(() => [...new Set(items.map((e) => e.type))].sort(), [items]);
  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    return items.filter((e) => !hidden.has(e.type) && (!q || searchText(e).includes(q)));
  }, [items, hidden, query]);
  const last = shown.at(-1)?.id;

  useEffect(() => {
    // Follow the tail like `tail --follow`, unless the person turned that off to read back.
    const el = list.current;
    if (el && follow) el.scrollTop = el.scrollHeight;
  }, [last, follow]);

  if (!mine || mine.state === 'loading' || mine.state === 'idle') {
    return (
      <p role="status" className="muted">
        <span className="spinner" aria-hidden="true" /> Loading events…
      </p>
    );
  }
  if (mine.state === 'error') {
    return (
      <p role="alert" className="error-text">
        Could not read the event log: {mine.error}
      </p>
    );
  }
  if (items.length === 0) {
    return <p className="empty-inline">No events recorded: this task has no event log (events.jsonl), or nothing ran in it yet.</p>;
  }

  const toggle = (type: string) => {
    const next = new Set(hidden);
    if (next.has(type)) next.delete(type);
    else next.add(type);
    setHidden(next);
  };

  return (
    <div className="events-tab">
      <div className="panel-toolbar events-toolbar">
        <div className="chips" role="group" aria-label="Event types shown">
          {types.map((t) => (
            <button key={t} type="button" className="chip" aria-pressed={!hidden.has(t)} onClick={() => toggle(t)}>
              {TYPE_LABEL[t] ?? t}
              <span className="chip-count">{items.filter((e) => e.type === t).length}</span>
            </button>
          ))}
        </div>
        <span className="spacer" />
        <input
          type="search"
          aria-label="Filter events"
          placeholder="Filter: step, type, data"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <label className="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
        </label>
      </div>
      <p className="muted small" aria-live="polite">
        {shown.length === items.length ? `${items.length} events` : `${shown.length} of ${items.length} events`}
        {mine.skipped > 0 && ` (the ${mine.skipped} oldest not shown: waystation tail prints them all)`}
      </p>
      {shown.length === 0 ? (
        <p className="empty-inline">No event matches this filter.</p>
      ) : (
        // The log role on a wrapper: a list inside keeps its items' list semantics.
        <div ref={list} className="event-timeline" role="log" aria-label="Event timeline" tabIndex={0}>
          <ol className="plain">
            {shown.map((e) => (
              <EventLine key={e.id} event={e} />
            ))}
          </ol>
        </div>
      )}
    </div>
  );
}

function EventLine({ event: e }: { event: TaskEventEntry }) {
  const data = e.data && Object.keys(e.data).length > 0 ? e.data : null;
  return (
    <li className={`event-line event-${e.type}`}>
      <span className="event-id mono">{e.id}</span>
      <time className="event-at mono" dateTime={e.at} title={e.at}>
        {formatTime(e.at)}
      </time>
      <span className="event-type">{e.type === 'version' ? `version ${e.version}` : (TYPE_LABEL[e.type] ?? e.type)}</span>
      {e.step_id && <span className="event-step mono">{e.step_id}</span>}
      {data &&
        (JSON.stringify(data).length <= 120 ? (
          <span className="event-data mono">{JSON.stringify(data)}</span>
        ) : (
          <details className="event-data">
            <summary className="mono">{previewValue(data, 100)}</summary>
            <pre className="mono">{JSON.stringify(data, null, 2)}</pre>
          </details>
        ))}
    </li>
  );
}

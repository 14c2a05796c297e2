/** What is happening to a task right now: runner output, task events, new versions, as they arrive. */
import { useEffect, useRef } from 'react';
import { useAppStore } from '../store/app-store.js';
import type { ActivityEntry } from '../store/store-types.js';
import { fillDirectory } from '../../../shared/checkpoint/fill-directory.js';

const EMPTY: ActivityEntry[] = [];

export function ActivityFeed({ taskId, limit = 50 }: { taskId: string; limit?: number }) {
  const entries = useAppStore((s) => s.activity[taskId] ?? EMPTY);
  const root = useAppStore((s) => s.directory?.root ?? null);
  const list = useRef<HTMLDivElement>(null);
  const last = entries.at(-1)?.key;
  useEffect(() => {
    // Follow the tail like a terminal, so the newest line is the one in view.
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [last]);
  if (entries.length === 0) {
    return <p className="muted small">Nothing yet: runner output and new versions appear here as they happen.</p>;
  }
  return (
    // The log role on a wrapper: a list inside keeps its items' list semantics. It scrolls once a run has said much,
    // so it takes the keyboard's focus too, to be scrolled without a mouse.
    <div ref={list} className="activity" role="log" aria-label="Live activity" aria-live="polite" tabIndex={0}>
      <ol className="plain">
        {entries.slice(-limit).map((e) => (
          <li key={e.key} className={`activity-${e.kind}`}>
            <time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time>
            <span>{fillDirectory(e.text, root)}</span>
          </li>
        ))}
      </ol>
    </div>
  );
}

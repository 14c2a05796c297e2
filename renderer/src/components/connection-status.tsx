/**
 * The toolbar's connection indicator: Live, Connecting…, or Disconnected with
 * a countdown to the next attempt, so a stopped host is never shown as live;
 * and, over the task shown, what a lost connection means for it.
 */
import { useEffect, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { useAppStore } from '../store/app-store.js';

export function ConnectionStatus() {
  const { connection, problem } = useAppStore(useShallow((s) => ({ connection: s.connection, problem: s.connectionProblem })));
  const text =
    connection === 'live'
      ? 'Live'
      : connection === 'connecting'
        ? 'Connecting…'
        : connection === 'refused'
          ? 'Not connected: token refused'
          : null;
  return (
    <span
      className={`conn conn-${connection}`}
      title={
        problem
          ? connection === 'refused'
            ? problem.reason
            : `${problem.reason}; changes made meanwhile are read again once it is back`
          : undefined
      }
    >
      <span className="dot" aria-hidden="true" />
      {/* A new countdown for each attempt: keyed by when it is due. */}
      {text !== null ? <Label text={text} /> : <Countdown key={problem?.retryAt ?? 0} retryAt={problem?.retryAt ?? 0} />}
    </span>
  );
}

function Label({ text }: { text: string }) {
  return (
    <span role="status" aria-label={`Connection: ${text}`}>
      {text}
    </span>
  );
}

function Countdown({ retryAt }: { retryAt: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    // The countdown only: the reconnect itself is the API's.
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const seconds = Math.max(0, Math.ceil((retryAt - now) / 1000));
  return <Label text={seconds > 0 ? `Disconnected · retrying in ${seconds} s` : 'Disconnected · reconnecting…'} />;
}

/**
 * Over the task pane while the host cannot be reached: the task shown is what
 * was last read, its actions are disabled, and it is read again once the host
 * is back (or, for a refused token, what to open instead). A refused page with
 * no task open says so in the pane itself (task-view's NoSelection).
 */
export function ConnectionNote() {
  const { connection, problem, taskOpen } = useAppStore(
    useShallow((s) => ({ connection: s.connection, problem: s.connectionProblem, taskOpen: s.selectedTaskId !== null })),
  );
  if (connection === 'refused') {
    if (!taskOpen) return null;
    return (
      <section className="connection-note" role="alert" aria-label="Connection to the host">
        <p>
          <strong>This page is not let in.</strong> The Waystation host refuses this page&apos;s token: it makes a new one each time it
          starts, so open the URL it printed (with <code>?token=</code>). Nothing can be done from here until then.
        </p>
      </section>
    );
  }
  if (connection !== 'offline') return null;
  return (
    <section className="connection-note" role="status" aria-label="Connection to the host">
      <p>
        <strong>Not connected to the Waystation host</strong>
        {problem ? ` (${problem.reason})` : ''}: what is shown may be out of date.
      </p>
      {taskOpen && (
        <p className="muted small">Its actions are disabled meanwhile; the open task is read again as soon as the host is back.</p>
      )}
    </section>
  );
}

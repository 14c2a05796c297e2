/**
 * The toolbar's connection indicator: Live, Connecting…, or Disconnected with
 * a countdown to the next attempt, so a stopped host is never shown as live.
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

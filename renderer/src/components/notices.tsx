/** Transient messages: errors stay until dismissed, successes fade after a few seconds. */
import { useEffect } from 'react';
import { useAppStore } from '../store/app-store.js';

export function Notices() {
  const notices = useAppStore((s) => s.notices);
  const dismiss = useAppStore((s) => s.dismissNotice);
  useEffect(() => {
    const timers = notices.filter((n) => n.kind !== 'error').map((n) => setTimeout(() => dismiss(n.id), 5000));
    return () => timers.forEach(clearTimeout);
  }, [notices, dismiss]);
  return (
    <div className="notices" aria-live="polite">
      {notices.map((n) => (
        <div key={n.id} className={`notice notice-${n.kind}`} role={n.kind === 'error' ? 'alert' : 'status'}>
          <span>{n.text}</span>
          <button type="button" className="icon-button" aria-label="Dismiss message" onClick={() => dismiss(n.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

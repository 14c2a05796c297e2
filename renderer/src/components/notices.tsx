/** Transient messages: errors stay until dismissed, the rest fade after a few seconds each. */
import { useEffect } from 'react';
import { useAppStore } from '../store/app-store.js';
import type { Notice } from '../store/store-types.js';

export function Notices() {
  const notices = useAppStore((s) => s.notices);
  return (
    <div className="notices" aria-live="polite">
      {notices.map((n) => (
        <NoticeItem key={n.id} notice={n} />
      ))}
    </div>
  );
}

function NoticeItem({ notice }: { notice: Notice }) {
  const dismiss = useAppStore((s) => s.dismissNotice);
  useEffect(() => {
    // Each notice keeps its own clock, so a burst of new ones never extends the old ones.
    if (notice.kind === 'error') return;
    const timer = setTimeout(() => dismiss(notice.id), 4000);
    return () => clearTimeout(timer);
  }, [notice, dismiss]);
  return (
    <div className={`notice notice-${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'}>
      <span>{notice.text}</span>
      <button type="button" className="icon-button" aria-label="Dismiss message" onClick={() => dismiss(notice.id)}>
        ×
      </button>
    </div>
  );
}

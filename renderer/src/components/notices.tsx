/**
 * Transient messages in the bottom-right corner: successes and infos fade
 * after a few seconds, errors stay until dismissed. At most a few are shown at
 * once, so a burst of messages never covers more than that corner.
 */
import { useEffect, useState } from 'react';
import { useAppStore } from '../store/app-store.js';
import type { Notice } from '../store/store-types.js';

/** How long a success or info notice stays, unless the pointer or focus rests on it. */
export const NOTICE_MS = 5000;
/** Notices shown at once; older ones are counted, not drawn. */
const VISIBLE = 3;

export function Notices() {
  const notices = useAppStore((s) => s.notices);
  const dismiss = useAppStore((s) => s.dismissNotice);
  const shown = notices.slice(-VISIBLE);
  const hidden = notices.length - shown.length;
  // A labelled region (a landmark, so nothing on the page sits outside one), not a live one:
  // each notice is its own status or alert, announced once as it appears.
  return (
    <div className="notices" role="region" aria-label="Notices">
      {hidden > 0 && (
        <div className="notice-more">
          <span>
            {hidden} older message{hidden === 1 ? '' : 's'}
          </span>
          <button type="button" className="link" onClick={() => notices.forEach((n) => dismiss(n.id))}>
            Dismiss all
          </button>
        </div>
      )}
      {shown.map((n) => (
        <NoticeItem key={n.id} notice={n} />
      ))}
    </div>
  );
}

function NoticeItem({ notice }: { notice: Notice }) {
  const dismiss = useAppStore((s) => s.dismissNotice);
  const [held, setHeld] = useState(false);
  useEffect(() => {
    // Each notice keeps its own clock, so a burst of new ones never extends the old ones; a reader
    // who points at or focuses a notice holds it until they move on.
    if (notice.kind === 'error' || held) return;
    const timer = setTimeout(() => dismiss(notice.id), NOTICE_MS);
    return () => clearTimeout(timer);
  }, [notice, dismiss, held]);
  return (
    <div
      className={`notice notice-${notice.kind}`}
      role={notice.kind === 'error' ? 'alert' : 'status'}
      onMouseEnter={() => setHeld(true)}
      onMouseLeave={() => setHeld(false)}
      onFocus={() => setHeld(true)}
      onBlur={() => setHeld(false)}
    >
      <span className="notice-text" title={notice.text}>
        {notice.text}
      </span>
      <button type="button" className="icon-button" aria-label="Dismiss message" onClick={() => dismiss(notice.id)}>
        ×
      </button>
    </div>
  );
}

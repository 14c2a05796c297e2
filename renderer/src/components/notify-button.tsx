/**
 * Browser mode: the button that asks the browser for permission to notify
 * (browsers grant it only from a click). The desktop app notifies through its
 * main process and needs no button; neither does a browser without Notification.
 */
import { useState } from 'react';
import { useAppStore } from '../store/app-store.js';

export function NotifyButton() {
  const desktop = useAppStore((s) => s.directory?.host === 'desktop');
  const N = typeof globalThis.Notification === 'function' ? globalThis.Notification : null;
  const [permission, setPermission] = useState<NotificationPermission | null>(N ? N.permission : null);
  if (desktop || !N || permission === null) return null;
  if (permission === 'granted') {
    return (
      <span className="tag" title="A browser notification appears when a task starts waiting for approval or for a human">
        🔔 Notifications on
      </span>
    );
  }
  return (
    <button
      type="button"
      disabled={permission === 'denied'}
      title={
        permission === 'denied'
          ? 'This browser blocks notifications for this page: allow them in its site settings'
          : 'Be notified when a task starts waiting for approval or for a human'
      }
      onClick={() => void N.requestPermission().then(setPermission)}
    >
      {permission === 'denied' ? 'Notifications blocked' : 'Notify me'}
    </button>
  );
}

/**
 * Open database…: a PostgreSQL store opened by its URL, beside Open folder.
 *
 * The password has a field of its own (a password field, never shown back):
 * one pasted inside the URL is moved there as it is typed. Both are handed
 * to the host once, on Open, and dropped when the dialog closes; the host
 * shows the database by its URL without the password and never adds it to
 * the recent folders.
 */
import { useContext, useEffect, useRef, useState } from 'react';
import { StoreContext, useAppStore } from '../store/app-store.js';
import { DialogActions } from './dialog-actions.js';

const SCHEME = /^postgres(?:ql)?:\/\//i;

/** The URL's password taken out of it (URL-decoded), or null when the URL holds none or does not parse. */
export function splitPassword(url: string): { url: string; password: string } | null {
  if (!SCHEME.test(url)) return null;
  try {
    const u = new URL(url);
    if (!u.password) return null;
    const password = decodeURIComponent(u.password);
    u.password = '';
    return { url: u.toString(), password };
  } catch {
    return null;
  }
}

/** What is wrong with a typed URL, in words, or null when it can be opened. */
export function databaseUrlProblem(url: string): string | null {
  const text = url.trim();
  if (!text) return 'Type the database URL, e.g. postgres://me@db.example.com/agents.';
  if (!SCHEME.test(text)) return 'A database URL starts with postgres:// or postgresql://.';
  try {
    const u = new URL(text);
    if (!u.hostname && !u.searchParams.get('host')) return 'The URL names no server: postgres://USER@HOST/DATABASE.';
  } catch {
    return 'This is not a URL that can be read: postgres://USER@HOST:PORT/DATABASE.';
  }
  return null;
}

/** The URL with `password` put back in, as the host's driver takes it. */
export function withPassword(url: string, password: string): string {
  if (!password) return url.trim();
  const u = new URL(url.trim());
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** The button and the dialog it opens. */
export function OpenDatabaseButton({ className }: { className?: string }) {
  const openDirectory = useAppStore((s) => s.openDirectory);
  // Read after the open, not from a render: whether the database is what is open now.
  const store = useContext(StoreContext);
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [url, setUrl] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const problem = databaseUrlProblem(url);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal?.();
    if (!open && d.open) d.close();
  }, [open]);

  const close = () => {
    // Nothing typed outlives the dialog: the password least of all.
    setPassword('');
    setFailure(null);
    setOpen(false);
  };

  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)}>
        Open database…
      </button>
      <dialog ref={dialog} className="dialog" aria-labelledby="open-database-title" onClose={close}>
        <form
          method="dialog"
          onSubmit={async (e) => {
            e.preventDefault();
            if (problem || busy) return;
            setBusy(true);
            setFailure(null);
            const before = store?.getState().directory?.root ?? null;
            try {
              await openDirectory(withPassword(url, password));
            } finally {
              setBusy(false);
            }
            const after = store?.getState().directory?.root ?? null;
            if (after !== null && after !== before && SCHEME.test(after)) {
              setUrl('');
              close();
            } else {
              // The host's reason is in the notice it raised; the dialog keeps what was typed to be corrected.
              setFailure('The database could not be opened: see the message above. Nothing was opened or changed.');
            }
          }}
        >
          <h2 id="open-database-title">Open database</h2>
          <p className="muted small">
            A PostgreSQL database that holds Waystation tasks (create its schema with <code>waystation db init URL</code>). Its tasks are
            shown live as runners on any machine save them.
          </p>
          <label className="field">
            <span>Database URL</span>
            <input
              type="text"
              className="mono"
              name="database-url"
              autoComplete="off"
              spellCheck={false}
              placeholder="postgres://me@db.example.com:5432/agents"
              value={url}
              onChange={(e) => {
                const split = splitPassword(e.target.value);
                // A password pasted inside the URL goes to its own field, where it is not shown.
                if (split) {
                  setUrl(split.url);
                  setPassword(split.password);
                } else setUrl(e.target.value);
              }}
              aria-invalid={url !== '' && problem !== null}
              aria-describedby="open-database-hint"
            />
          </label>
          <label className="field">
            <span>Password</span>
            <input
              type="password"
              name="database-password"
              autoComplete="off"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-describedby="open-database-hint"
            />
          </label>
          <p id="open-database-hint" className="muted small">
            {url !== '' && problem
              ? problem
              : 'Leave the password empty to use PGPASSWORD or ~/.pgpass. It is used for this connection only: never shown, logged or kept in the recent folders.'}
          </p>
          <DialogActions failure={failure} onCancel={close} submit="Open" busyText="Opening…" busy={busy} disabled={problem !== null} />
        </form>
      </dialog>
    </>
  );
}

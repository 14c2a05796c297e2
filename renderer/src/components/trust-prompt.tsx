/**
 * The trust prompt: an untrusted directory is browsed read-only, and this asks
 * a person to trust it, naming what would run once trusted (its registered
 * agent modules, the interrupted tasks that would resume), as VS Code's
 * Workspace Trust does.
 */
import { useEffect, useRef, useState } from 'react';
import type { DirectoryTrust } from '../../../shared/api/contract.js';
import { useAppStore } from '../store/app-store.js';
import { errorText } from '../store/error-text.js';

export function TrustPrompt() {
  const untrusted = useAppStore((s) => s.directory?.untrusted === true && Boolean(s.directory?.root));
  const api = useAppStore((s) => s.api);
  const trustDirectory = useAppStore((s) => s.trustDirectory);
  const notify = useAppStore((s) => s.notify);
  const [trust, setTrust] = useState<DirectoryTrust | null>(null);
  const [busy, setBusy] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (trust && !d.open) d.showModal?.();
    if (!trust && d.open) d.close();
  }, [trust]);

  if (!untrusted) return null;
  const ask = async () => {
    try {
      setTrust(await api.getDirectoryTrust({}));
    } catch (err) {
      notify('error', errorText(err));
    }
  };
  const accept = async () => {
    setBusy(true);
    const ok = await trustDirectory();
    setBusy(false);
    if (ok) setTrust(null);
  };
  return (
    <>
      <button type="button" className="tag warn" onClick={() => void ask()} title="This folder is not trusted: nothing in it runs">
        Trust this folder…
      </button>
      <dialog ref={dialog} className="dialog" aria-labelledby="trust-title" onClose={() => setTrust(null)}>
        {trust && (
          <form method="dialog" onSubmit={(e) => e.preventDefault()}>
            <h2 id="trust-title">Trust {trust.root}?</h2>
            <p>{trust.message}</p>
            {trust.agents.length > 0 && (
              <>
                <h3>Agent modules that would be loaded</h3>
                <ul>
                  {trust.agents.map((a) => (
                    <li key={`${a.module}#${a.export ?? ''}`}>
                      <code>{a.module}</code> ({a.name})
                    </li>
                  ))}
                </ul>
              </>
            )}
            {trust.resumes.length > 0 && (
              <>
                <h3>Tasks that would resume at once</h3>
                <ul>
                  {trust.resumes.map((id) => (
                    <li key={id}>
                      <code>{id}</code>
                    </li>
                  ))}
                </ul>
              </>
            )}
            {trust.config_problem && <p className="warn">{trust.config_problem}</p>}
            <div className="row-actions end">
              <button type="button" onClick={() => setTrust(null)}>
                Keep browsing read-only
              </button>
              <button type="button" className="primary" disabled={!trust.can_trust || busy} onClick={() => void accept()}>
                Trust and run
              </button>
            </div>
          </form>
        )}
      </dialog>
    </>
  );
}

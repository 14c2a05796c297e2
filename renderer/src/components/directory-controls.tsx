/**
 * The open checkpoint directory: shown in the toolbar, switchable in the
 * desktop app (the folder picker, to run tasks or read-only, a PostgreSQL
 * database by its URL, and the recent folders, each reopened in the mode it
 * was last opened in), fixed in browser mode, where the web host serves the
 * one directory or database it was started on.
 */
import { useShallow } from 'zustand/react/shallow';
import { useAppStore } from '../store/app-store.js';
import { OpenDatabaseButton } from './open-database-dialog.js';

const READ_ONLY_HINT =
  'Browse a folder without running anything in it: no task is resumed on opening, no agent module is loaded, nothing can be started, resumed, approved, rejected or edited. For folders you do not trust.';

/** The last path segment, for a compact label; the full path goes in the title. */
export function folderName(root: string): string {
  const parts = root.split(/[\\/]+/).filter(Boolean);
  return parts.at(-1) ?? root;
}

export function DirectoryControls() {
  const { directory, choosing } = useAppStore(
    useShallow((s) => ({ directory: s.directory, choosing: Boolean(s.busy['choose-directory']) })),
  );
  const chooseDirectory = useAppStore((s) => s.chooseDirectory);
  const openDirectory = useAppStore((s) => s.openDirectory);
  if (!directory) return null;
  const root = directory.root;

  if (directory.host === 'web') {
    return (
      <span
        className="dir mono"
        data-testid="directory"
        title={`${root ?? 'no directory'}: this web host serves this one directory; start \`waystation serve DIR\` to browse another`}
      >
        {root ?? 'no directory open'}
      </span>
    );
  }

  const recent = directory.recent.filter((r) => r !== root);
  return (
    <span className="dir-controls">
      <span className="dir mono" data-testid="directory" title={root ?? undefined}>
        {root ?? 'no directory open'}
      </span>
      <button type="button" onClick={() => void chooseDirectory()} disabled={choosing} aria-busy={choosing}>
        Open folder…
      </button>
      <button type="button" onClick={() => void chooseDirectory({ readOnly: true })} disabled={choosing} title={READ_ONLY_HINT}>
        Open read-only…
      </button>
      <OpenDatabaseButton />
      {recent.length > 0 && (
        <label className="recent-select">
          <span className="visually-hidden">Recent folders</span>
          <select
            aria-label="Recent folders"
            value=""
            onChange={(e) => {
              if (e.target.value) void openDirectory(e.target.value);
            }}
          >
            <option value="">Recent…</option>
            {recent.map((r) => (
              <option key={r} value={r} title={r}>
                {folderName(r)} — {r}
                {directory.recent_read_only.includes(r) ? ' (read-only)' : ''}
              </option>
            ))}
          </select>
        </label>
      )}
    </span>
  );
}

/** What the task list shows while no directory is open: what to do about it. */
export function NoDirectory() {
  const directory = useAppStore((s) => s.directory);
  const chooseDirectory = useAppStore((s) => s.chooseDirectory);
  const openDirectory = useAppStore((s) => s.openDirectory);
  if (directory?.host === 'web') {
    return (
      <div className="empty" role="status">
        <p>
          <strong>This host serves no checkpoint directory.</strong>
        </p>
        <p>
          Stop it and start it on one: <code>waystation serve DIR</code>, then open the URL it prints.
        </p>
      </div>
    );
  }
  const recent = directory?.recent ?? [];
  return (
    <div className="empty" role="status">
      <p>
        <strong>No checkpoint directory is open.</strong>
      </p>
      <p>
        Open a folder that holds task checkpoints (one folder per task), or a new empty one to start tasks in, or a PostgreSQL database that
        a team's runners share.
      </p>
      <button type="button" className="primary" onClick={() => void chooseDirectory()}>
        Open folder…
      </button>{' '}
      <button type="button" onClick={() => void chooseDirectory({ readOnly: true })} title={READ_ONLY_HINT}>
        Open read-only…
      </button>{' '}
      <OpenDatabaseButton />
      {recent.length > 0 && (
        <>
          <p className="muted small">Recent folders</p>
          <ul className="plain recent-list">
            {recent.map((r) => (
              <li key={r}>
                <button type="button" className="link mono" title={r} onClick={() => void openDirectory(r)}>
                  {r}
                </button>
                {directory?.recent_read_only.includes(r) && <span className="muted small"> read-only</span>}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

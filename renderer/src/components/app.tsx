/** The window: toolbar, task list on the left, the open task on the right. */
import { useContext, useEffect } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { StoreContext, useAppStore } from '../store/app-store.js';
import { titleWithCount, waitingCount, watchAttention } from '../store/attention-alerts.js';
import { NotifyButton } from './notify-button.js';
import { readOnlyReason } from '../store/read-only.js';
import { actionBlockReason } from '../store/action-block.js';
import type { Theme } from '../store/store-types.js';
import { TaskList } from './task-list.js';
import { TaskView } from './task-view.js';
import { Notices } from './notices.js';
import { StartTaskDialog } from './start-task-dialog.js';
import { DirectoryControls } from './directory-controls.js';
import { ConnectionNote, ConnectionStatus } from './connection-status.js';
import { TrustPrompt } from './trust-prompt.js';
import { HiddenThreadsNote } from './hidden-threads-note.js';
import { useNarrowWindow } from './narrow-window.js';

export function App() {
  const init = useAppStore((s) => s.init);
  const dispose = useAppStore((s) => s.dispose);
  const theme = useAppStore((s) => s.theme);

  useEffect(() => {
    void init();
    return dispose;
  }, [init, dispose]);

  const store = useContext(StoreContext);
  useEffect(() => (store ? watchAttention(store) : undefined), [store]);
  const waiting = useAppStore((s) => waitingCount(s.tasks));
  const taskOpen = useAppStore((s) => s.selectedTaskId !== null);
  const narrow = useNarrowWindow();
  useEffect(() => {
    if (!narrow || !taskOpen) return;
    // The list that held focus is gone from a narrow window once a task opens: focus goes to the way back to it, the
    // first thing of the task's pane, rather than to the top of the page.
    const active = document.activeElement;
    if (!active || active === document.body || active.closest('.task-list'))
      document.querySelector<HTMLElement>('.back-to-list button')?.focus();
  }, [narrow, taskOpen]);
  useEffect(() => {
    // The count of tasks waiting for a person, in front of the title: seen in the taskbar and the tab strip.
    document.title = titleWithCount(waiting);
  }, [waiting]);

  useEffect(() => {
    // The theme lives on <html> so CSS variables reach the dialog and CodeMirror too.
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
  }, [theme]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      const typing = target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
      if (e.key === '/' && !typing) {
        e.preventDefault();
        document.querySelector<HTMLInputElement>('input[aria-label="Search tasks"]')?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  return (
    <div className="app">
      <a className="skip-link" href="#main-pane">
        Skip to task
      </a>
      <Toolbar />
      <div className={taskOpen ? 'panes task-open' : 'panes'}>
        {narrow && !taskOpen ? (
          // The list alone: it is the page's main content, and its heading the page's.
          <main id="main-pane" className="main-pane list-main" aria-labelledby="tasks-heading">
            <h1 id="tasks-heading" className="visually-hidden">
              Tasks
            </h1>
            <TaskList />
          </main>
        ) : (
          <>
            <TaskList />
            <main id="main-pane" className="main-pane" aria-label="Task details">
              {taskOpen && <BackToList />}
              <ConnectionNote />
              <TaskView />
            </main>
          </>
        )}
      </div>
      <Notices />
      <StartTaskDialog />
    </div>
  );
}

/**
 * In a window too narrow for the list beside the task (styles.css, "Narrow windows"), one of them is shown at a
 * time: this leads from the task back to the list, and is not shown (nor in the accessibility tree) otherwise.
 */
function BackToList() {
  const selectTask = useAppStore((s) => s.selectTask);
  return (
    <nav className="back-to-list" aria-label="Back to the task list">
      <button
        type="button"
        className="link"
        onClick={() => {
          selectTask(null);
          // The list comes back in place of the task: focus goes where the person was before opening it.
          requestAnimationFrame(() => document.querySelector<HTMLElement>('[role="listbox"][aria-label="Task list"]')?.focus());
        }}
      >
        ← All tasks
      </button>
    </nav>
  );
}

function Toolbar() {
  const { hasDirectory, busy, theme, agents, readOnly, blocked } = useAppStore(
    useShallow((s) => ({
      hasDirectory: Boolean(s.directory?.root),
      busy: s.busy,
      theme: s.theme,
      agents: s.agents,
      readOnly: readOnlyReason(s.directory),
      // Nothing starts while the host is out of reach either.
      blocked: actionBlockReason(s),
    })),
  );
  const setTheme = useAppStore((s) => s.setTheme);
  const setStartDialogOpen = useAppStore((s) => s.setStartDialogOpen);
  const busyLabels = Object.values(busy);
  // From the default (system) one click reaches dark, the theme most asked for; the next, light; the next, back.
  const nextTheme: Record<Theme, Theme> = { system: 'dark', dark: 'light', light: 'system' };
  return (
    <header className="toolbar" role="banner">
      <span className="brand" aria-hidden="true">
        ◆
      </span>
      <span className="brand-name">Waystation</span>
      <DirectoryControls />
      {hasDirectory && readOnly && (
        <span className="tag warn" title={readOnly}>
          Read-only
        </span>
      )}
      <TrustPrompt />
      <HiddenThreadsNote />
      <span className="spacer" />
      {busyLabels.length > 0 && (
        <span className="busy" role="status">
          <span className="spinner" aria-hidden="true" /> {busyLabels[0]}
        </span>
      )}
      <ConnectionStatus />
      <NotifyButton />
      <button
        type="button"
        onClick={() => setStartDialogOpen(true)}
        disabled={agents.length === 0 || !hasDirectory || blocked !== null}
        title={!hasDirectory ? 'Open a checkpoint directory first' : (blocked ?? (agents.length === 0 ? 'No agents available' : undefined))}
      >
        + New task
      </button>
      <button
        type="button"
        className="icon-button"
        aria-label={`Theme: ${theme}. Switch to ${nextTheme[theme]}`}
        onClick={() => setTheme(nextTheme[theme])}
      >
        {theme === 'dark' ? '☾' : theme === 'light' ? '☀' : '◐'}
      </button>
    </header>
  );
}

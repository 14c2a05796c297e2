/**
 * The note on a database that holds LangGraph's checkpointer tables beside Waystation's schema (an earlier build
 * created its schema in a LangGraph database): it opens as the Waystation store, so LangGraph's threads are not
 * listed, and without a word they would seem lost. The reading commands print the same note (cli-context.ts).
 *
 * In the toolbar, among the notes about what is open (Read-only, Trust this folder…): a tag that says it in three
 * words and opens the whole of it, with the way back to the threads.
 */
import { useId, useState } from 'react';
import { useAppStore } from '../store/app-store.js';
import { ModalDialog } from './modal-dialog.js';
import { PathText } from './path-text.js';

export function HiddenThreadsNote() {
  const root = useAppStore((s) => (s.directory?.also_holds_langgraph ? s.directory.root : null));
  const [open, setOpen] = useState(false);
  const titleId = useId();
  if (!root) return null;
  return (
    <>
      <button type="button" className="tag warn" aria-haspopup="dialog" onClick={() => setOpen(true)}>
        LangGraph threads not shown
      </button>
      <ModalDialog open={open} labelledBy={titleId} onClose={() => setOpen(false)}>
        {/* A form for the dialog's padding and its Close, as the trust prompt's; nothing is sent. */}
        <form method="dialog" onSubmit={(e) => e.preventDefault()}>
          <h2 id={titleId}>This database also holds LangGraph threads</h2>
          <p>
            <code>
              <PathText text={root} />
            </code>{' '}
            holds LangGraph&apos;s checkpointer tables beside Waystation&apos;s: it is opened as the Waystation store it also holds, and
            LangGraph&apos;s threads are not shown.
          </p>
          <p>
            To browse them, copy the Waystation tasks to a store of their own (
            <code>
              <PathText text={`waystation copy ${root} DIR`} />
            </code>
            ), then drop Waystation&apos;s tables from this database: docs/POSTGRES.md, &ldquo;A LangGraph database&rdquo;, gives the
            statement. LangGraph&apos;s tables are left as they are.
          </p>
          <div className="row-actions end">
            <button type="button" onClick={() => setOpen(false)}>
              Close
            </button>
          </div>
        </form>
      </ModalDialog>
    </>
  );
}

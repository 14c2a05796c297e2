/**
 * Whether the window is too narrow for the task list beside the task (a browser tab beside another, a small
 * screen): then one is shown at a time (app.tsx). The width is the one styles.css names in its "Narrow windows"
 * rule, which lays the panes out; this tells the page which of them holds its main content.
 */
import { useSyncExternalStore } from 'react';

export const NARROW_QUERY = '(max-width: 760px)';

/** The query, where the page can ask it: a document laid out without a window's media (a test's DOM) is wide. */
function query(): MediaQueryList | null {
  return typeof window.matchMedia === 'function' ? window.matchMedia(NARROW_QUERY) : null;
}

function subscribe(onChange: () => void): () => void {
  const q = query();
  q?.addEventListener('change', onChange);
  return () => q?.removeEventListener('change', onChange);
}

export function useNarrowWindow(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => query()?.matches ?? false,
    () => false,
  );
}

/**
 * Why the actions that go through the host (start, resume, approve, reject,
 * stop, fork, edit, rerun, verify) are not offered now, as one sentence the
 * disabled control shows: the host out of reach first, since nothing can be
 * done without it, then a directory open read-only.
 */
import type { Store } from './store-types.js';
import { readOnlyReason } from './read-only.js';

/** Why the host cannot be reached from this page, or null while it can. */
export function hostUnreachableReason(s: Pick<Store, 'connection' | 'connectionProblem'>): string | null {
  if (s.connection === 'refused')
    return 'The Waystation host refuses this page: open the URL it printed when it started (with ?token=); nothing can be done from here until then';
  if (s.connection === 'offline')
    return `Disconnected from the Waystation host${s.connectionProblem ? ` (${s.connectionProblem.reason})` : ''}: what is shown may be out of date, and nothing can be done until it is back`;
  return null;
}

/** Why nothing can be changed through the host now, or null when it can. */
export function actionBlockReason(s: Pick<Store, 'connection' | 'connectionProblem' | 'directory'>): string | null {
  return hostUnreachableReason(s) ?? readOnlyReason(s.directory);
}

/** Whether the open directory may run anything, and how the app says it may not. */
import type { DirectoryInfo } from '../../../shared/api/contract.js';

/** What an empty list or view says in place of New task when the directory is open read-only. */
export const NOTHING_TO_START = 'This directory is open read-only: nothing can be started here.';

/**
 * Why no task can be started, resumed, approved, rejected or edited in the
 * open directory, or null when they can. The host refuses those actions
 * there anyway; the app disables them and says why instead of offering them.
 */
export function readOnlyReason(directory: DirectoryInfo | null): string | null {
  if (!directory?.read_only) return null;
  if (directory.untrusted)
    return 'This folder is not trusted: tasks are shown, nothing is run or changed, and no agent module is loaded. Trust this folder… to run its tasks';
  return directory.host === 'web'
    ? 'This host was started read-only (waystation serve --read-only): tasks are shown, nothing is run or changed'
    : 'This folder is open read-only: tasks are shown, nothing is run or changed, and no agent module is loaded. Open it with Open folder… to run its tasks';
}

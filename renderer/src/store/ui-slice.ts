import type { Slice, Theme, UiSlice } from './store-types.js';

const THEME_KEY = 'waystation-theme';

function storedTheme(): Theme {
  try {
    const t = globalThis.localStorage?.getItem(THEME_KEY);
    return t === 'light' || t === 'dark' ? t : 'system';
  } catch {
    // Storage can be disabled (privacy settings, file://); the OS theme still applies.
    return 'system';
  }
}

/** View state that is the user's, not the host's: theme, tab, dialogs. */
export const createUiSlice: Slice<UiSlice> = (set, get) => ({
  theme: storedTheme(),
  tab: 'plan',
  startDialogOpen: false,
  stepFocus: null,
  setTheme(theme) {
    try {
      globalThis.localStorage?.setItem(THEME_KEY, theme);
    } catch {
      // See storedTheme: the choice then lasts for this session only.
    }
    set({ theme });
  },
  setTab(tab) {
    set({ tab });
  },
  setStartDialogOpen(open) {
    set({ startDialogOpen: open });
  },
  openStep(taskId, stepId) {
    // A step is found in the Plan tab, whichever tab was last used.
    get().selectTask(taskId);
    set({ tab: 'plan', stepFocus: { taskId, stepId } });
  },
  clearStepFocus() {
    if (get().stepFocus) set({ stepFocus: null });
  },
});

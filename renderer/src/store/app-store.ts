/**
 * The store and the React glue around it.
 *
 * The store is created per API (one per window, one per test), then handed
 * down through context, so components never reach for a global.
 */
import { createContext, useContext } from 'react';
import { createStore, useStore, type StoreApi } from 'zustand';
import type { WaystationApi } from '../../../shared/api/contract.js';
import { createConnectionSlice } from './connection-slice.js';
import { createDetailSlice } from './detail-slice.js';
import { createDirectorySlice } from './directory-slice.js';
import { createTaskFeedSlice } from './task-feed-slice.js';
import { createVersionDiffSlice } from './version-diff-slice.js';
import { createTimeTravelSlice } from './time-travel-slice.js';
import { createOperationsSlice } from './operations-slice.js';
import type { Store } from './store-types.js';
import { createTasksSlice } from './tasks-slice.js';
import { createUiSlice } from './ui-slice.js';

export type AppStore = StoreApi<Store>;

/** Create the renderer's store over an API implementation. */
export function createAppStore(api: WaystationApi): AppStore {
  return createStore<Store>()((...a) => ({
    ...createConnectionSlice(api)(...a),
    ...createDirectorySlice(...a),
    ...createTasksSlice(...a),
    ...createDetailSlice(...a),
    ...createTaskFeedSlice(...a),
    ...createVersionDiffSlice(...a),
    ...createOperationsSlice(...a),
    ...createTimeTravelSlice(...a),
    ...createUiSlice(...a),
  }));
}

export const StoreContext = createContext<AppStore | null>(null);

/** Select from the app store. Selectors returning new objects must be wrapped in useShallow. */
export function useAppStore<T>(selector: (state: Store) => T): T {
  const store = useContext(StoreContext);
  if (!store) throw new Error('useAppStore needs a <StoreContext.Provider>: the app mounts one in main.tsx');
  return useStore(store, selector);
}

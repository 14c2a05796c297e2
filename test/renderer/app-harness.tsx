/**
 * The app as `renderer/src/main.tsx` mounts it, over a store a test made, and
 * the stores a test made, disposed after it: what every renderer test that
 * shows the whole app needs, in one place.
 */
import { afterAll, beforeAll } from 'vitest';
import { cleanup, render, type RenderResult } from '@testing-library/react';
import type { WaystationApi } from '../../shared/api/contract.js';
import { App } from '../../renderer/src/components/app.js';
import { createAppStore, StoreContext, type AppStore } from '../../renderer/src/store/app-store.js';

const made: AppStore[] = [];

/** A store over `api`, disposed by `disposeStores`. */
export function newStore(api: WaystationApi): AppStore {
  const store = createAppStore(api);
  made.push(store);
  return store;
}

/** Render the whole app over `store`. */
export function renderApp(store: AppStore): RenderResult {
  return render(
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>,
  );
}

/** The ids of the tasks `store` lists, sorted: what a test compares a listing with. */
export function listedIds(store: AppStore): string[] {
  return store
    .getState()
    .tasks.map((t) => t.task_id)
    .sort();
}

/** Unmount what was rendered and dispose every store `newStore` made (their subscriptions and timers). */
export function disposeStores(): void {
  cleanup();
  for (const store of made.splice(0)) store.getState().dispose();
}

/**
 * jsdom lays nothing out: every element is given `px` of height and width for the tests of the calling file or
 * `describe` block, so the virtualised task list renders its rows (as many as fit).
 */
export function layOutElements(px: number): void {
  const sizes = ['offsetHeight', 'offsetWidth', 'clientHeight', 'clientWidth'] as const;
  beforeAll(() => {
    for (const p of sizes) Object.defineProperty(HTMLElement.prototype, p, { configurable: true, get: () => px });
  });
  afterAll(() => {
    for (const p of sizes) delete (HTMLElement.prototype as unknown as Record<string, unknown>)[p];
  });
}

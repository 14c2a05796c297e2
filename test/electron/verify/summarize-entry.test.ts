/**
 * A task's summary reads its lease only when the lease can change what the
 * summary says: whether a task whose checkpoint says it is running is running
 * or was interrupted. A finished task the runtime wrote keeps its lease/
 * folder, and a listing of thousands of them would otherwise read every one.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { summarizeEntry } from '../../../electron/verify/summarize-entry.js';
import { openStore } from '../../../electron/store/directory-store.js';
import type { TaskStatus } from '../../../shared/checkpoint/schema.js';
import { sampleCheckpoint } from '../../shared/checkpoint/sample-checkpoint.js';

let root: string;
beforeEach(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'waystation-summarize-')));
});
afterEach(async () => {
  await fsp.rm(root, { recursive: true, force: true });
});

const entry = (status: TaskStatus) => ({
  task_id: 't',
  location: 't',
  format: 'waystation' as const,
  checkpoint: sampleCheckpoint({ task_id: 't', status, artifacts: [] }),
  read_only: false,
  problems: [],
  has_lease: true,
});

describe('summarizeEntry', () => {
  it('asks for the lease of a running task only, and shows it running or interrupted by it', async () => {
    const store = openStore(root);
    const readLease = vi.spyOn(store, 'readLease');
    for (const held of [true, false]) {
      readLease.mockResolvedValueOnce({ entry: null, info: { held } });
      expect((await summarizeEntry(store, entry('running'))).display_status).toBe(held ? 'running' : 'interrupted');
    }
    expect(readLease).toHaveBeenCalledTimes(2);
    // Whatever a lease would say, these show their status.
    readLease.mockResolvedValue({ entry: null, info: { held: true } });
    for (const status of ['done', 'failed', 'waiting_human', 'waiting_approval', 'halted'] as const) {
      expect((await summarizeEntry(store, entry(status))).display_status).toBe(status);
    }
    expect(readLease).toHaveBeenCalledTimes(2);
  });
});

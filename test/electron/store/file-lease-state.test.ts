import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readLeaseState } from '../../../electron/store/file-lease-state.js';

let dir: string;
const now = Date.parse('2026-01-10T10:00:30Z');

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'waystation-lease-'));
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

async function lease(n: number, entry: Record<string, unknown>) {
  await fsp.mkdir(path.join(dir, 'lease'), { recursive: true });
  await fsp.writeFile(path.join(dir, 'lease', `${n}.json`), JSON.stringify(entry));
}

const base = {
  owner: 'runner-a',
  pid: 4242,
  hostname: 'elsewhere',
  acquired_at: '2026-01-10T10:00:00Z',
  heartbeat_at: '2026-01-10T10:00:20Z',
  released: false,
};

describe('readLeaseState', () => {
  it('is not held without a lease folder', async () => {
    expect(await readLeaseState(dir, { now })).toEqual({ held: false });
  });

  it('is held by a fresh, unreleased entry and reports its owner', async () => {
    await lease(1, base);
    expect(await readLeaseState(dir, { now })).toEqual({ held: true, owner: 'runner-a', pid: 4242, since: '2026-01-10T10:00:00Z' });
  });

  it('reads only the highest entry, so a later release ends the hold', async () => {
    await lease(1, base);
    await lease(2, { ...base, released: true });
    expect((await readLeaseState(dir, { now })).held).toBe(false);
  });

  it('is not held once the heartbeat is older than the time-to-live', async () => {
    await lease(1, base);
    expect((await readLeaseState(dir, { now, ttlMs: 5_000 })).held).toBe(false);
  });

  it('is not held on this host when its pid is gone, however fresh the heartbeat', async () => {
    const exited = spawnSync(process.execPath, ['-e', '']).pid;
    await lease(1, { ...base, hostname: os.hostname(), pid: exited });
    expect((await readLeaseState(dir, { now })).held).toBe(false);
    await lease(2, { ...base, hostname: os.hostname(), pid: process.pid });
    expect((await readLeaseState(dir, { now })).held).toBe(true);
  });

  it('counts an unreadable entry as not held', async () => {
    await fsp.mkdir(path.join(dir, 'lease'));
    await fsp.writeFile(path.join(dir, 'lease', '3.json'), '{"owner": "x", "rel');
    expect((await readLeaseState(dir, { now })).held).toBe(false);
  });
});

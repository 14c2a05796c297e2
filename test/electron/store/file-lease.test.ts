import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { acquireLease } from '../../../electron/store/file-lease.js';
import { readLease } from '../../../electron/store/lease-record.js';
import {
  DEFAULT_LEASE_TTL_MS,
  LEASE_TTL_ENV,
  leaseIsLive,
  LeaseHeldError,
  leaseTtlMs,
  processStartToken,
} from '../../../electron/store/lease-rules.js';
import { readLeaseState } from '../../../electron/store/file-lease-state.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-lease-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function writeEntry(n: number, entry: Record<string, unknown>) {
  await fs.mkdir(path.join(dir, 'lease'), { recursive: true });
  await fs.writeFile(path.join(dir, 'lease', `${n}.json`), JSON.stringify(entry));
}

describe('the task lease', () => {
  it('is exclusive while held and free again once released', async () => {
    const a = await acquireLease(dir, 't', { owner: 'a', heartbeatMs: 0 });
    await expect(acquireLease(dir, 't', { owner: 'b', heartbeatMs: 0 })).rejects.toBeInstanceOf(LeaseHeldError);
    // The reader the UI uses agrees that it is held.
    expect((await readLeaseState(dir)).held).toBe(true);
    await a.release();
    expect((await readLease(dir))?.released).toBe(true);
    expect((await readLeaseState(dir)).held).toBe(false);
    const b = await acquireLease(dir, 't', { owner: 'b', heartbeatMs: 0 });
    await b.release();
  });

  it('takes over a lease whose process is gone', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const pid = Number(dead.stdout.toString());
    const now = new Date().toISOString();
    await writeEntry(1, { owner: 'ghost', pid, hostname: os.hostname(), acquired_at: now, heartbeat_at: now, released: false });
    const lease = await acquireLease(dir, 't', { owner: 'me', heartbeatMs: 0 });
    expect(lease.n).toBe(2);
    await lease.release();
  });

  it('takes over a lease whose heartbeat is older than the time-to-live', async () => {
    const old = new Date(Date.now() - 60_000).toISOString();
    await writeEntry(1, { owner: 'far', pid: process.pid, hostname: 'another-host', acquired_at: old, heartbeat_at: old, released: false });
    expect(leaseIsLive(await readLease(dir), 30_000)).toBe(false);
    const lease = await acquireLease(dir, 't', { owner: 'me', heartbeatMs: 0, ttlMs: 30_000 });
    await lease.release();
  });

  it('respects a live lease on another host until its heartbeat is stale', async () => {
    const now = new Date().toISOString();
    await writeEntry(1, { owner: 'far', pid: 1, hostname: 'another-host', acquired_at: now, heartbeat_at: now, released: false });
    const err = await acquireLease(dir, 't', { owner: 'me', heartbeatMs: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseHeldError);
    expect((err as Error).message).toContain('nothing was written');
  });

  it('notices on heartbeat that it was taken over, and refuses further writes', async () => {
    const lease = await acquireLease(dir, 't', { owner: 'a', heartbeatMs: 0 });
    const now = new Date().toISOString();
    await writeEntry(lease.n + 1, {
      owner: 'thief',
      pid: process.pid,
      hostname: os.hostname(),
      acquired_at: now,
      heartbeat_at: now,
      released: false,
    });
    await lease.heartbeat();
    expect(lease.lost).not.toBeNull();
    expect(() => lease.assertHeld()).toThrow(/taken over/);
  });

  it('holds while its folder changes, and is lost once the folder no longer holds its entry, though device and inode are the same', async () => {
    const lease = await acquireLease(dir, 't', { owner: 'a', heartbeatMs: 0 });
    // The holder's own writes move the folder's change time (checkpoint.json replaced), and its heartbeats rewrite its entry.
    await fs.writeFile(path.join(dir, 'checkpoint.json.tmp'), '{}');
    await fs.rename(path.join(dir, 'checkpoint.json.tmp'), path.join(dir, 'checkpoint.json'));
    await lease.heartbeat();
    expect(() => lease.assertHeld()).not.toThrow();
    // What a folder deleted and made again under the name looks like when it gets the old inode number back: the same
    // device and inode, a change time that moved, and a lease entry of that number that is not this holder's.
    const now = new Date().toISOString();
    await writeEntry(lease.n, {
      owner: 'another task',
      pid: process.pid,
      hostname: os.hostname(),
      acquired_at: now,
      heartbeat_at: now,
      released: false,
    });
    await fs.writeFile(path.join(dir, 'checkpoint.json'), '{}');
    await fs.rm(path.join(dir, 'checkpoint.json'));
    expect(() => lease.assertHeld()).toThrow(/renamed or replaced during the run/);
    expect(lease.held).toBe(false);
  });

  it('lets exactly one of many concurrent acquirers win', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => acquireLease(dir, 't', { owner: `r${i}`, heartbeatMs: 0 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof LeaseHeldError)).toBe(
      true,
    );
  });
});

describe('a holder on this host', () => {
  it('keeps its lease while its event loop is blocked past the time-to-live, and loses it once dead', { timeout: 30_000 }, async () => {
    const ttlMs = 150;
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'lease-holder.ts'), dir], {
      env: { ...process.env, [LEASE_TTL_ENV]: String(ttlMs) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (b: Buffer) => b.toString().includes('held') && resolve());
        child.on('exit', (code) => reject(new Error(`the lease holder exited early (${code})`)));
      });
      const entry = await readLease(dir);
      expect(entry?.pid).toBe(child.pid);
      expect(entry?.process_start).toBe(processStartToken(child.pid!));
      // Wait until the heartbeat it wrote at acquiring is older than the TTL.
      while (Date.now() - Date.parse((await readLease(dir))!.heartbeat_at) <= ttlMs * 3) await new Promise((r) => setTimeout(r, 50));
      expect(leaseIsLive(await readLease(dir), ttlMs)).toBe(true);
      await expect(acquireLease(dir, 't', { owner: 'second runner', heartbeatMs: 0, ttlMs })).rejects.toBeInstanceOf(LeaseHeldError);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    expect(leaseIsLive(await readLease(dir), ttlMs)).toBe(false);
    const taken = await acquireLease(dir, 't', { owner: 'second runner', heartbeatMs: 0, ttlMs });
    expect(taken.n).toBe(2);
    await taken.release();
  });

  it('is stale when its pid now names a process that started at another time', async () => {
    const now = new Date().toISOString();
    await writeEntry(1, {
      owner: 'reused',
      pid: process.pid,
      hostname: os.hostname(),
      acquired_at: now,
      heartbeat_at: now,
      released: false,
      process_start: 'another-boot:1',
    });
    const current = processStartToken(process.pid);
    // Where the platform cannot tell start times apart, the fresh heartbeat decides instead.
    expect(leaseIsLive(await readLease(dir), 30_000)).toBe(current === null);
  });

  it('takes its time-to-live from WAYSTATION_LEASE_TTL_MS', () => {
    expect(leaseTtlMs({ [LEASE_TTL_ENV]: '1234' })).toBe(1234);
    expect(leaseTtlMs({ [LEASE_TTL_ENV]: 'soon' })).toBe(DEFAULT_LEASE_TTL_MS);
    expect(leaseTtlMs({})).toBe(DEFAULT_LEASE_TTL_MS);
  });
});

/** Shared fixtures for the store tests: temp roots and checkpoints. */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { Checkpoint, CheckpointInput } from '../../../shared/checkpoint/schema.js';
import type { SaveRequest } from '../../../electron/store/store-types.js';
import { freshCheckpoint } from '../../../bench/lib/fresh-checkpoint.js';
import { hashTree } from '../../support/hash-tree.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';

export { hashTree };

/**
 * `T` without the keys `K`, keeping its known keys: the built-in Omit collapses a
 * loose zod object (one with an index signature) to the index signature alone.
 */
export type Without<T, K extends PropertyKey> = { [P in keyof T as P extends K ? never : P]: T[P] };

export type NewCheckpoint = Without<CheckpointInput, 'version'>;

/** A fresh temp folder; remove it with `cleanup`. */
export async function tempRoot(prefix = 'waystation-store-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function cleanup(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
}

/** A small valid checkpoint with `steps` pending steps. */
export function makeCheckpoint(taskId: string, steps = 3, extra: Partial<NewCheckpoint> = {}): NewCheckpoint {
  const fresh = freshCheckpoint({
    taskId,
    taskName: `task ${taskId}`,
    goal: 'test the store',
    steps,
    at: '2026-01-01T00:00:00Z',
    phase: 'start',
  });
  return { ...withoutVersion(fresh), ...extra };
}

/** The checkpoint with `version` dropped, ready to pass back to save. */
export function withoutVersion<T extends { version?: number }>(cp: T): Without<T, 'version'> {
  const { version: _v, ...rest } = cp;
  return rest as unknown as Without<T, 'version'>;
}

/**
 * The save that makes `cp` version `v` in the crash tests' writing loop.
 *
 * Step `v % planLength` is done once more, the phase becomes `phase <v>`, the
 * step's result records `v` beside `resultBytes` of text, and the message
 * `m<v>` joins the history: what survives a crash can be checked against `v`.
 */
export function loopedSave(cp: Checkpoint, v: number, planLength: number, resultBytes: number): SaveRequest {
  const next = withoutVersion(cp);
  next.plan = next.plan.slice();
  const i = v % planLength;
  next.plan[i] = { ...next.plan[i], status: 'done', attempts: (next.plan[i].attempts ?? 0) + 1 };
  next.current_step = i;
  next.phase = `phase ${v}`;
  return {
    expectedVersion: cp.version,
    checkpoint: next,
    results: { [next.plan[i].id]: { version: v, text: 'r'.repeat(resultBytes) } },
    appendHistory: [{ role: 'assistant', content: `m${v}` }],
  };
}

/** Every file under `dir`, relative, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  return Object.keys(await hashTree(dir)).sort();
}

/**
 * Read a version file the way docs/FORMAT.md describes it, independently of
 * the store's reader: the envelope on the first line, then one line per blob
 * the version carries, named by the hash of its bytes, each a JSON document.
 * Throws on anything else.
 */
export async function readVersionFileStrict(abs: string): Promise<{ envelope: Record<string, unknown>; blobs: Map<string, unknown> }> {
  const text = await fs.readFile(abs, 'utf8');
  const [head, ...rest] = text.split('\n');
  const envelope = JSON.parse(head) as Record<string, unknown>;
  if (rest.length > 0 && rest.pop() !== '') throw new Error(`${abs}: the last carried blob does not end with a line break`);
  const blobs = new Map<string, unknown>();
  for (const line of rest) blobs.set(createHash('sha256').update(line).digest('hex'), JSON.parse(line));
  // Every blob the version introduces (a reference ending in @<its version>) is on one of its lines.
  for (const m of head.matchAll(new RegExp(`sha256:([0-9a-f]{64})@${envelope.version}"`, 'g'))) {
    if (!blobs.has(m[1])) throw new Error(`${abs}: names blob ${m[1]}@${envelope.version} but carries no line with that hash`);
  }
  return { envelope, blobs };
}

/**
 * nodeFs counting whole-file reads by file name: the store reads version files, checkpoint.json and the history
 * index through readWholeFile.
 */
export function countingWholeReads(): { fs: StoreFs; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const fs: StoreFs = {
    ...nodeFs,
    readWholeFile: (p, opts) => {
      reads.set(path.basename(p), (reads.get(path.basename(p)) ?? 0) + 1);
      return nodeFs.readWholeFile(p, opts);
    },
  };
  return { fs, reads };
}

/** The error a promise rejects with; a test failure when it resolves. */
export async function failure(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => null,
    (e: unknown) => e as Error,
  );
  if (!err) throw new Error('expected a failure');
  return err;
}

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { quickDriftCheck } from '../../../electron/verify/quick-drift.js';
import { summarizeListing } from '../../../electron/verify/summarize-entry.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { verifyTask } from '../../../electron/verify/verify-task.js';
import type { Artifact } from '../../../shared/checkpoint/schema.js';
import { sampleCheckpoint } from '../../shared/checkpoint/sample-checkpoint.js';

let root: string;

beforeEach(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'waystation-quick-drift-')));
});
afterEach(async () => {
  await fsp.rm(root, { recursive: true, force: true });
});

/** Write a file and return the artifact record an agent would have saved for it. */
async function written(rel: string, content: string): Promise<Artifact> {
  const file = path.join(root, rel);
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, content);
  return {
    type: 'file',
    path: rel,
    sha256: createHash('sha256').update(content).digest('hex'),
    size: Buffer.byteLength(content),
    status: 'written',
  };
}

const done = (artifacts: Artifact[]) => sampleCheckpoint({ status: 'done', artifacts });

describe('quickDriftCheck', () => {
  it('passes artifacts that are there with their recorded size', async () => {
    const a = await written('out/a.md', 'alpha');
    const gone = { ...(await written('out/old.md', 'old')), status: 'deleted' };
    await fsp.rm(path.join(root, gone.path));
    expect(await quickDriftCheck(root, done([a, gone]))).toBe(false);
  });

  it('finds a missing artifact, a resized one, a deleted one that came back and one that leaves the root', async () => {
    const missing = await written('out/missing.md', 'soon gone');
    await fsp.rm(path.join(root, missing.path));
    expect(await quickDriftCheck(root, done([missing]))).toBe(true);

    const resized = await written('out/resized.md', 'short');
    await fsp.writeFile(path.join(root, resized.path), 'a good deal longer');
    expect(await quickDriftCheck(root, done([resized]))).toBe(true);

    const back = { ...(await written('out/back.md', 'still here')), status: 'deleted' };
    expect(await quickDriftCheck(root, done([back]))).toBe(true);

    const escaping: Artifact = { type: 'file', path: '../elsewhere.md', sha256: 'a'.repeat(64), size: 1, status: 'written' };
    expect(await quickDriftCheck(root, done([escaping]))).toBe(true);
  });

  it('leaves a same-size rewrite to the full verify, which hashes it', async () => {
    const edited = await written('out/edited.md', 'original text');
    await fsp.writeFile(path.join(root, edited.path), 'ORIGINAL TEXT');
    const cp = done([edited]);
    expect(await quickDriftCheck(root, cp)).toBe(false);
    expect((await verifyTask(root, cp)).drift).toBe(true);
  });
});

describe('summarizeListing', () => {
  it('shows a done task whose artifact changed size as drifted, in listing order', async () => {
    const kept = await written('out/kept.md', 'kept');
    const changed = await written('out/changed.md', 'as recorded');
    await fsp.appendFile(path.join(root, changed.path), '\nedited by hand');
    const entry = (taskId: string, artifacts: Artifact[]) => ({
      task_id: taskId,
      location: taskId,
      format: 'waystation' as const,
      checkpoint: sampleCheckpoint({ task_id: taskId, status: 'done', artifacts }),
      read_only: false,
      problems: [],
    });
    const entries = Array.from({ length: 40 }, (_, i) => entry(`t${i}`, i % 3 === 0 ? [changed] : [kept]));
    const summaries = (await summarizeListing(openStore(root), entries, { concurrency: 4 })).map((r) => r.summary);
    expect(summaries.map((s) => s.task_id)).toEqual(entries.map((e) => e.task_id));
    expect(summaries.map((s) => s.display_status)).toEqual(entries.map((_, i) => (i % 3 === 0 ? 'drifted' : 'done')));
  });
});

import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  isIgnoredRelative,
  watchDirectory,
  type DirectoryChange,
  type DirectoryWatcher,
} from '../../../electron/host/directory-watcher.js';

const run = promisify(execFile);

let root: string;
let watcher: DirectoryWatcher | null = null;
let batches: DirectoryChange[][] = [];
let waiters: Array<() => void> = [];

function changesFor(location: string): DirectoryChange[] {
  return batches.flat().filter((c) => c.location === location);
}

/** Resolves once `predicate` holds for the batches seen so far. */
function until(predicate: () => boolean, what: string, limitMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gave up waiting for ${what}; batches: ${JSON.stringify(batches).slice(0, 2000)}`)),
      limitMs,
    );
    const check = () => {
      if (predicate()) {
        clearTimeout(timer);
        resolve();
      } else waiters.push(check);
    };
    check();
  });
}

async function startWatching(): Promise<void> {
  watcher = watchDirectory(root, (changes) => {
    batches.push(changes);
    const pending = waiters;
    waiters = [];
    for (const w of pending) w();
  });
  await watcher.ready;
}

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-watch-'));
  batches = [];
  waiters = [];
  await fs.mkdir(path.join(root, 't1', 'versions'), { recursive: true });
  await fs.writeFile(path.join(root, 't1', 'checkpoint.json'), '{"version":1}');
});

afterEach(async () => {
  await watcher?.close();
  watcher = null;
  await fs.rm(root, { recursive: true, force: true });
});

describe('isIgnoredRelative', () => {
  it('ignores writers temporary files, blobs and version files, but not the files every save touches', () => {
    expect(isIgnoredRelative('t1/.checkpoint.json.ab12.tmp')).toBe(true);
    expect(isIgnoredRelative('t1/versions/00000002.json.tmp')).toBe(true);
    expect(isIgnoredRelative('.hidden/checkpoint.json')).toBe(true);
    expect(isIgnoredRelative('t1/blobs/abc')).toBe(true);
    expect(isIgnoredRelative('t1/checkpoint.json')).toBe(false);
    expect(isIgnoredRelative('t1/versions/00000002.json')).toBe(true);
    expect(isIgnoredRelative('t1/events.jsonl')).toBe(false);
    expect(isIgnoredRelative('t1/lease/00000003.json')).toBe(false);
    expect(isIgnoredRelative('legacy.json')).toBe(false);
  });
});

describe('watchDirectory', () => {
  it("reports another process's temp-and-rename as a change of the task, never the temp file", async () => {
    await startWatching();
    const script = `
      const fs = require('node:fs');
      const path = require('node:path');
      const dir = process.argv[1];
      const tmp = path.join(dir, '.checkpoint.json.x1y2.tmp');
      fs.writeFileSync(tmp, '{"version":2}');
      fs.renameSync(tmp, path.join(dir, 'checkpoint.json'));
    `;
    await run(process.execPath, ['-e', script, path.join(root, 't1')]);
    await until(() => changesFor('t1').some((c) => c.paths.includes('t1/checkpoint.json')), 'the renamed checkpoint.json');
    const all = batches.flat().flatMap((c) => c.paths);
    expect(all.some((p) => p.endsWith('.tmp'))).toBe(false);
    expect(changesFor('t1').every((c) => c.kind === 'changed')).toBe(true);
  });

  it('reports a deleted task folder as removed', async () => {
    await startWatching();
    await fs.rm(path.join(root, 't1'), { recursive: true });
    await until(() => changesFor('t1').some((c) => c.kind === 'removed'), 'the removal of t1');
  });

  it('reports the files of the artifact folders it is given, below their root entry, and stops when they are dropped', async () => {
    const folder = path.join(root, 'outputs', 't1', 'deep');
    await fs.mkdir(folder, { recursive: true });
    await fs.writeFile(path.join(folder, 'a.md'), 'one');
    await startWatching();
    watcher!.watchArtifactFolders(new Set(['outputs/t1/deep', 'outputs/missing', 't1']));
    await fs.appendFile(path.join(folder, 'a.md'), ' two');
    await until(() => changesFor('outputs').some((c) => c.paths.includes('outputs/t1/deep/a.md')), 'the change of outputs/t1/deep/a.md');
    watcher!.watchArtifactFolders(new Set());
    batches = [];
    await fs.appendFile(path.join(folder, 'a.md'), ' three');
    // A later change elsewhere shows the watcher still reports, and that the dropped folder's file went unreported.
    await fs.writeFile(path.join(root, 't1', 'checkpoint.json'), '{"version":2}');
    await until(() => changesFor('t1').length > 0, 'the change of t1');
    expect(changesFor('outputs').flatMap((c) => c.paths)).not.toContain('outputs/t1/deep/a.md');
  });

  it('reports a new task folder and a new root-level task file, once more after the folder has settled', async () => {
    const flushedAt: Array<{ at: number; locations: string[] }> = [];
    watcher = watchDirectory(root, (changes) => {
      batches.push(changes);
      flushedAt.push({ at: Date.now(), locations: changes.map((c) => c.location) });
      const pending = waiters;
      waiters = [];
      for (const w of pending) w();
    });
    await watcher.ready;
    await fs.mkdir(path.join(root, 'fresh', 'versions'), { recursive: true });
    await fs.writeFile(path.join(root, 'fresh', 'versions', '00000001.json'), '{}');
    await fs.writeFile(path.join(root, 'fresh', 'checkpoint.json'), '{}');
    await fs.writeFile(path.join(root, 'legacy-task.json'), '{}');
    const writtenAt = Date.now();
    // Files written while chokidar starts watching a new folder may go unreported;
    // a batch naming the folder after the last write lets a reader see them all.
    await until(
      () => flushedAt.some((f) => f.at >= writtenAt && f.locations.includes('fresh')),
      'a report of the new folder after its files were written',
    );
    await until(() => changesFor('legacy-task.json').length > 0, 'the new root file');
    expect(changesFor('fresh').every((c) => c.kind === 'changed')).toBe(true);
  });

  it('coalesces 1,000 versions written in a burst, and the last one always reaches the subscriber', async () => {
    // What a subscriber sees when a batch arrives: the hot snapshot's version at that moment.
    const seenVersions: number[] = [];
    watcher = watchDirectory(root, (changes) => {
      batches.push(changes);
      if (changes.some((c) => c.location === 't1')) {
        void fs.readFile(path.join(root, 't1', 'checkpoint.json'), 'utf8').then((text) => {
          seenVersions.push(JSON.parse(text).version);
          const pending = waiters;
          waiters = [];
          for (const w of pending) w();
        });
      }
    });
    await watcher.ready;
    const dir = path.join(root, 't1');
    const burstStart = Date.now();
    for (let v = 1; v <= 1000; v++) {
      // The store's protocol: version file by link/rename, hot snapshot by temp-and-rename, one event line.
      const name = String(v).padStart(8, '0') + '.json';
      const tmpVersion = path.join(dir, 'versions', `.${name}.${v}.tmp`);
      await fs.writeFile(tmpVersion, JSON.stringify({ version: v }));
      await fs.rename(tmpVersion, path.join(dir, 'versions', name));
      const tmpHot = path.join(dir, `.checkpoint.json.${v}.tmp`);
      await fs.writeFile(tmpHot, JSON.stringify({ version: v }));
      await fs.rename(tmpHot, path.join(dir, 'checkpoint.json'));
      await fs.appendFile(path.join(dir, 'events.jsonl'), JSON.stringify({ id: v, type: 'version', version: v }) + '\n');
    }
    await until(() => seenVersions.includes(1000), 'a batch that shows version 1000');
    const burstMs = Date.now() - burstStart;
    const t1Batches = changesFor('t1');
    expect(t1Batches.length).toBeGreaterThan(0);
    // A batch is sent only after 75 ms without a change (or 400 ms into a change that goes on), so however slowly
    // the machine writes, there are at most as many batches as 75 ms spans in the burst: about 3,000 file changes
    // reported one by one would exceed it by far.
    expect(t1Batches.length).toBeLessThanOrEqual(Math.floor(burstMs / 75) + 1);
    expect(t1Batches.length).toBeLessThan(1000);
    expect(t1Batches.flatMap((c) => c.paths)).toContain('t1/events.jsonl');
    expect(t1Batches.flatMap((c) => c.paths).some((p) => p.includes('.tmp'))).toBe(false);
    // Each batch names a location once, however many files changed in it.
    expect(batches.every((b) => new Set(b.map((c) => c.location)).size === b.length)).toBe(true);
  });

  it("reports a lease taken and let go in the task's lease folder, and appends to a segment through the event log", async () => {
    await fs.mkdir(path.join(root, 't1', 'lease'));
    await startWatching();
    await fs.writeFile(path.join(root, 't1', 'lease', '00000001.json'), '{"holder":"a"}');
    await until(() => changesFor('t1').some((c) => c.paths.includes('t1/lease/00000001.json')), 'the lease entry');
    // A segment append writes into versions/ (never watched) and appends a line to events.jsonl (watched).
    await fs.appendFile(path.join(root, 't1', 'versions', '00000001.json'), '{"version":2}\n');
    await fs.appendFile(path.join(root, 't1', 'events.jsonl'), '{"id":1,"type":"version","version":2}\n');
    await until(() => changesFor('t1').some((c) => c.paths.includes('t1/events.jsonl')), 'the appended event line');
    expect(
      batches
        .flat()
        .flatMap((c) => c.paths)
        .some((p) => p.includes('/versions')),
    ).toBe(false);
  });

  it('watches a lease folder made after the watch started, and a task folder replaced under the same name', async () => {
    await startWatching();
    await fs.mkdir(path.join(root, 't1', 'lease'));
    await fs.writeFile(path.join(root, 't1', 'lease', '00000001.json'), '{}');
    await until(() => changesFor('t1').some((c) => c.paths.includes('t1/lease')), 'the new lease folder');
    // Written once the folder's own event has been seen, so that only its watch can report it.
    await new Promise((r) => setTimeout(r, 100));
    await fs.writeFile(path.join(root, 't1', 'lease', '00000002.json'), '{}');
    await until(() => changesFor('t1').some((c) => c.paths.includes('t1/lease/00000002.json')), 'an entry of the new lease folder');

    await fs.rm(path.join(root, 't1'), { recursive: true });
    await until(() => changesFor('t1').some((c) => c.kind === 'removed'), 'the removal of t1');
    await new Promise((r) => setTimeout(r, 400));
    batches = [];
    await fs.mkdir(path.join(root, 't1'));
    await until(() => changesFor('t1').some((c) => c.kind === 'changed'), 'the new t1');
    await new Promise((r) => setTimeout(r, 400));
    batches = [];
    await fs.writeFile(path.join(root, 't1', 'events.jsonl'), '{"id":1}\n');
    await until(() => changesFor('t1').some((c) => c.paths.includes('t1/events.jsonl')), 'a write into the new t1');
  });

  it('reports every task gone when the root itself is removed', async () => {
    await fs.mkdir(path.join(root, 't2'));
    await fs.writeFile(path.join(root, 'legacy.json'), '{}');
    await startWatching();
    await fs.rm(root, { recursive: true });
    for (const location of ['t1', 't2', 'legacy.json'])
      await until(() => changesFor(location).some((c) => c.kind === 'removed'), `the removal of ${location}`);
    await fs.mkdir(root);
  });

  it('stops reporting after close', async () => {
    await startWatching();
    await watcher!.close();
    const before = batches.length;
    await fs.writeFile(path.join(root, 't1', 'checkpoint.json'), '{"version":3}');
    // Give a live watcher ample time to have reported it, through a real second writer process.
    await run(process.execPath, ['-e', 'setTimeout(() => {}, 300)']);
    expect(batches.length).toBe(before);
  });
});

/**
 * A task folder deleted or renamed while its task runs: the runner notices
 * that the folder is no longer the one it took the lease in (by identity,
 * not by name), stops with a clear error and a non-zero exit, and writes
 * nothing into a folder it did not create.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureCli as cli } from '../cli/capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { hashTree, makeCheckpoint } from '../store/store-test-helpers.js';
import { RUNTIME_INDEX_URL, writeAgentProject } from './agent-project.js';

const WAITING_AGENT = `
import { promises as fs } from 'node:fs';
import { defineAgent, z } from '${RUNTIME_INDEX_URL}';

export default defineAgent({
  name: 'waiting',
  description: 'says it started, then waits for a go file',
  options: z.object({ ready: z.string(), go: z.string() }),
  goal: () => 'wait',
  plan: () => [{ id: 'wait', name: 'wait for go' }, { id: 'after', name: 'after' }],
  async run(ctx) {
    await ctx.step('wait', async () => {
      await fs.writeFile(ctx.options.ready, 'started');
      for (;;) {
        if (await fs.access(ctx.options.go).then(() => true, () => false)) return 'went';
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    await ctx.step('after', async () => 'done');
  },
});
`;

let tmp: string;
let root: string;
let moduleFile: string;
useOfflineWorkers();
beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-folder-gone-')));
  ({ root, moduleFile } = await writeAgentProject(tmp, 'waiting.ts', WAITING_AGENT));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function until(file: string): Promise<void> {
  while (
    !(await fs.access(file).then(
      () => true,
      () => false,
    ))
  )
    await new Promise((r) => setTimeout(r, 20));
}

/** Start the waiting task, do `meanwhile` once it is running, then let it go on; the CLI's answer. */
async function runAndMeanwhile(meanwhile: (taskDir: string) => Promise<void>) {
  const ready = path.join(tmp, 'ready');
  const go = path.join(tmp, 'go');
  const run = cli('run', root, moduleFile, '--task', 't', '--ready', ready, '--go', go);
  await until(ready);
  await meanwhile(path.join(root, 't'));
  await fs.writeFile(go, 'go');
  return run;
}

describe('a task folder that goes away during a run', () => {
  it('deleted: the run stops with a non-zero exit and an error saying so, and nothing is written again', async () => {
    const r = await runAndMeanwhile((dir) => fs.rm(dir, { recursive: true, force: true }));
    expect(r.code).not.toBe(0);
    expect(`${r.out}${r.err}`).toContain('was deleted during the run');
    expect(`${r.out}${r.err}`).not.toContain('done (version');
    await expect(fs.access(path.join(root, 't'))).rejects.toThrow();
  });

  it("deleted, a new folder made in its place (which may get the old one's inode number): the run stops, and the new folder stays empty", async () => {
    const r = await runAndMeanwhile(async (dir) => {
      await fs.rm(dir, { recursive: true, force: true });
      await fs.mkdir(dir);
    });
    expect(r.code).not.toBe(0);
    expect(`${r.out}${r.err}`).toContain('renamed or replaced during the run');
    expect(await fs.readdir(path.join(root, 't'))).toEqual([]);
  });

  it("deleted, another task written under its name (its folder may get the old one's inode number): the run stops and leaves it as it was", async () => {
    let written: Record<string, string> = {};
    const r = await runAndMeanwhile(async (dir) => {
      await fs.rm(dir, { recursive: true, force: true });
      await openStore(root).create(makeCheckpoint('t'));
      written = await hashTree(dir);
    });
    expect(r.code).not.toBe(0);
    expect(`${r.out}${r.err}`).toContain('renamed or replaced during the run');
    expect(await hashTree(path.join(root, 't'))).toEqual(written);
  });

  it('renamed, a new folder made in its place: the run stops, and the new folder stays empty', async () => {
    const r = await runAndMeanwhile(async (dir) => {
      await fs.rename(dir, `${dir}-moved`);
      await fs.mkdir(dir);
    });
    expect(r.code).not.toBe(0);
    expect(`${r.out}${r.err}`).toContain('renamed or replaced during the run');
    expect(await fs.readdir(path.join(root, 't'))).toEqual([]);
  });
});

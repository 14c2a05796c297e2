/**
 * A resume over a newest version file that does not read: a typed refusal
 * that names the file and its problem, exit 2, and not a byte written, not
 * even a lease entry. Both ways the file can be behind what a reader shows:
 * torn under an intact checkpoint.json, and torn past it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { captureCli as cli } from '../cli/capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { hashTree } from './store-test-helpers.js';

let dir: string;

useOfflineWorkers({ WAYSTATION_OFFLINE_LATENCY_MS: '5' });
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-resume-torn-'));
  delete process.env.SKIP_FAILURE;
});
afterEach(async () => {
  delete process.env.SKIP_FAILURE;
  await fs.rm(dir, { recursive: true, force: true });
});

/** A failed demo task, its version files, newest last. */
async function failedTask(): Promise<string[]> {
  expect((await cli('run', dir, 'checkpoint-demo', '--task', 'demo')).code).toBe(RunExit.failed);
  return (await fs.readdir(path.join(dir, 'demo', 'versions'))).filter((n) => /^\d{8}\.json$/.test(n)).sort();
}

describe('resume over a torn newest version', () => {
  it.each([
    ['under an intact checkpoint.json', false],
    ['past checkpoint.json', true],
  ])('refuses, naming the file, with exit 2 and nothing written: %s', async (_, pastHot) => {
    const versions = await failedTask();
    const newest = path.join(dir, 'demo', 'versions', versions.at(-1)!);
    if (pastHot) {
      // checkpoint.json one version behind, as a power cut between the version's link and the hot snapshot's rename leaves it.
      const previous = await openStore(dir).readVersion('demo', versions.length - 1);
      await fs.writeFile(path.join(dir, 'demo', 'checkpoint.json'), JSON.stringify(previous));
    }
    await fs.truncate(newest, 50);
    const before = await hashTree(dir);

    process.env.SKIP_FAILURE = '1';
    const r = await cli('resume', dir, 'demo');
    expect(r.code).toBe(RunExit.usage);
    expect(r.out + r.err).toContain(`demo/versions/${versions.at(-1)}: the JSON ends early after 50 bytes`);
    expect(r.out + r.err).toContain('Nothing was written');
    expect(r.out + r.err).not.toMatch(/\n\s+at /);
    expect(await hashTree(dir)).toEqual(before);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defaultWorkerLaunch, workerLaunchFor } from '../../../electron/runtime/worker-launch.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('defaultWorkerLaunch', () => {
  it('starts a worker of the same build: from the sources, through tsx, when the runtime runs from its sources', () => {
    const launch = defaultWorkerLaunch();
    expect(launch.entry).toBe(path.join(repo, 'electron/runtime/worker-main.ts'));
    expect(launch.execArgv).toEqual(['--import', expect.stringMatching(/^file:.*tsx/)]);
  });
});

describe('workerLaunchFor a compiled build', () => {
  let dir: string;
  const launcherUrl = () => pathToFileURL(path.join(dir, 'chunk.js')).href;
  const put = (name: string) => fs.writeFileSync(path.join(dir, name), '');
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-launch-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("starts the CLI bundle's worker through the loader of its code cache, with no Node flags", () => {
    put('worker.cjs');
    put('worker-loader.cjs');
    expect(workerLaunchFor(launcherUrl())).toEqual({ entry: path.join(dir, 'worker-loader.cjs'), execArgv: [] });
  });

  it('starts worker-main.js where there is no bundled worker script beside the loader (the desktop build, the library)', () => {
    put('worker-loader.cjs');
    expect(workerLaunchFor(launcherUrl()).entry).toBe(path.join(dir, 'worker-main.js'));
    fs.rmSync(path.join(dir, 'worker-loader.cjs'));
    expect(workerLaunchFor(launcherUrl())).toEqual({ entry: path.join(dir, 'worker-main.js'), execArgv: [] });
  });
});

import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultWorkerLaunch } from '../../../electron/runtime/worker-launch.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('defaultWorkerLaunch', () => {
  it('starts a worker of the same build: from the sources, through tsx, when the runtime runs from its sources', () => {
    const launch = defaultWorkerLaunch();
    expect(launch.entry).toBe(path.join(repo, 'electron/runtime/worker-main.ts'));
    expect(launch.execArgv).toEqual(['--import', expect.stringMatching(/^file:.*tsx/)]);
  });
});

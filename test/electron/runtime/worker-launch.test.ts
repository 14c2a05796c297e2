import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledBuildState } from '../../../electron/runtime/build-stamp.js';
import { defaultWorkerLaunch } from '../../../electron/runtime/worker-launch.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('defaultWorkerLaunch from the sources', () => {
  it('starts workers from the TypeScript sources through tsx when WAYSTATION_FROM_SOURCE is set', () => {
    const launch = defaultWorkerLaunch({ WAYSTATION_FROM_SOURCE: '1' });
    expect(launch.entry).toBe(path.join(repo, 'electron/runtime/worker-main.ts'));
    expect(launch.execArgv).toEqual(['--import', expect.stringMatching(/^file:.*tsx/)]);
  });

  it('starts them from dist/ exactly when that build matches the sources', () => {
    const launch = defaultWorkerLaunch({});
    if (compiledBuildState(repo).state === 'fresh') {
      expect(launch).toEqual({ entry: path.join(repo, 'dist/electron/runtime/worker-main.js'), execArgv: [] });
    } else {
      expect(launch.entry).toBe(path.join(repo, 'electron/runtime/worker-main.ts'));
    }
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD_STAMP_FILE, compiledBuildState, removeBuildStamp, writeBuildStamp } from '../../../electron/runtime/build-stamp.js';

let root: string;
const past = new Date(Date.now() - 60_000);

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-stamp-'));
  for (const rel of ['a.ts', 'sub/b.ts']) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), 'export {};\n');
    fs.utimesSync(path.join(root, rel), past, past);
  }
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe('the build stamp', () => {
  it('records the sources relative to the package, once each, sorted', () => {
    writeBuildStamp(root, 1234, [path.join(root, 'sub/b.ts'), 'a.ts', 'a.ts']);
    const stamp = JSON.parse(fs.readFileSync(path.join(root, BUILD_STAMP_FILE), 'utf8'));
    expect(stamp).toEqual({ format: 1, started_at_ms: 1234, sources: ['a.ts', 'sub/b.ts'] });
  });

  it('is fresh while no source changed since the build started', () => {
    writeBuildStamp(root, Date.now(), ['a.ts', 'sub/b.ts']);
    expect(compiledBuildState(root)).toEqual({ state: 'fresh' });
  });

  it('is stale, naming the source, when one was saved after the build started', () => {
    writeBuildStamp(root, Date.now(), ['a.ts', 'sub/b.ts']);
    const later = new Date(Date.now() + 2_000);
    fs.utimesSync(path.join(root, 'sub/b.ts'), later, later);
    expect(compiledBuildState(root)).toEqual({ state: 'stale', reason: 'sub/b.ts changed since the last build', changed: 'sub/b.ts' });
  });

  it('is stale when a source the build read is gone', () => {
    writeBuildStamp(root, Date.now(), ['a.ts', 'sub/b.ts']);
    fs.rmSync(path.join(root, 'a.ts'));
    expect(compiledBuildState(root)).toMatchObject({ state: 'stale', changed: 'a.ts' });
  });

  it('is missing without a stamp, after removeBuildStamp, or with a stamp it cannot read', () => {
    expect(compiledBuildState(root).state).toBe('missing');
    writeBuildStamp(root, Date.now(), ['a.ts']);
    removeBuildStamp(root);
    expect(compiledBuildState(root).state).toBe('missing');
    fs.writeFileSync(path.join(root, BUILD_STAMP_FILE), '{"format": 1, "started_at_ms": "soon"');
    expect(compiledBuildState(root).state).toBe('missing');
    fs.writeFileSync(path.join(root, BUILD_STAMP_FILE), JSON.stringify({ format: 2, started_at_ms: 0, sources: [] }));
    expect(compiledBuildState(root).state).toBe('missing');
  });
});

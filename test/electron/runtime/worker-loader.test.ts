/**
 * The compiled CLI's worker entry (electron/runtime/worker-loader.cts) runs
 * the script beside it as CommonJS with V8's code cache of it: the same run
 * with no cache, with the cache it wrote, and with a cache V8 refuses (damaged,
 * or made for another build of the script), an agent module imported through
 * the import() the loader hands over included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { REPO } from '../../support/node-bundle.js';

let dir: string;
const cache = () => path.join(dir, 'worker.cjs.cache');

/**
 * A stand-in for the bundled worker: what a CommonJS module sees, and an ES module it imports through the import()
 * the loader hands over (import-module.ts), printed as JSON.
 */
function writeScript(marker: string): void {
  fs.writeFileSync(
    path.join(dir, 'worker.cjs'),
    `const { pathToFileURL } = require('node:url');
const importModule = globalThis[Symbol.for('waystation.importModule')];
importModule(pathToFileURL(require('node:path').join(__dirname, 'agent.mjs')).href).then((agent) => {
  console.log(JSON.stringify({ marker: ${JSON.stringify(marker)}, agent: agent.name, file: __filename, dir: __dirname,
    cacheVariable: process.env.WAYSTATION_WORKER_CODE_CACHE ?? null, exportsIsModule: exports === module.exports }));
});
`,
  );
}

function runLoader(mode?: 'write' | 'report') {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.WAYSTATION_WORKER_CODE_CACHE;
  if (mode) env.WAYSTATION_WORKER_CODE_CACHE = mode;
  const r = spawnSync(process.execPath, [path.join(dir, 'worker-loader.cjs')], { encoding: 'utf8', env, cwd: dir });
  expect(r.status, r.stderr).toBe(0);
  return { out: JSON.parse(r.stdout.trim()) as Record<string, unknown>, err: r.stderr };
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-worker-loader-'));
  await build({
    entryPoints: { 'worker-loader': path.join(REPO, 'electron/runtime/worker-loader.cts') },
    outdir: dir,
    outExtension: { '.js': '.cjs' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
  });
  fs.writeFileSync(path.join(dir, 'agent.mjs'), "export const name = 'an ES module agent';\n");
  writeScript('first');
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the worker loader', () => {
  it('runs the script as CommonJS, import() included, and hides its own variable from it', () => {
    const { out } = runLoader();
    expect(out).toEqual({
      marker: 'first',
      agent: 'an ES module agent',
      file: path.join(dir, 'worker.cjs'),
      dir,
      cacheVariable: null,
      exportsIsModule: true,
    });
    expect(fs.existsSync(cache())).toBe(false);
  });

  it('writes the code cache when asked, and the next run takes it', () => {
    expect(runLoader('write').out.marker).toBe('first');
    expect(fs.statSync(cache()).size).toBeGreaterThan(0);
    const { out, err } = runLoader('report');
    expect(err).toContain('worker code cache: taken');
    expect(out.agent).toBe('an ES module agent');
  });

  it('runs as without a cache when V8 refuses it: damaged, or made for another build of the script', () => {
    runLoader('write');
    fs.writeFileSync(cache(), Buffer.from('not a code cache'));
    const damaged = runLoader('report');
    expect(damaged.err).toContain('worker code cache: refused');
    expect(damaged.out.marker).toBe('first');

    runLoader('write');
    writeScript('rebuilt');
    const stale = runLoader('report');
    expect(stale.err).toContain('worker code cache: refused');
    expect(stale.out.marker).toBe('rebuilt');
  });

  it('says when there is no cache at all', () => {
    fs.rmSync(cache(), { force: true });
    expect(runLoader('report').err).toContain('worker code cache: none');
  });
});

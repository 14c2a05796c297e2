// The worker process as the compiled CLI runs it (`npm run build:lib`, bin/build-lib.mjs): one CommonJS script,
// dist/bundle/worker.cjs, its loader beside it, worker-loader.cjs (electron/runtime/worker-loader.cts), and V8's
// code cache of the script, worker.cjs.cache, written from a run of the demo agent.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeBundleOptions, ownSources } from './bundle-options.mjs';

/**
 * Bundle the worker script and its loader into `outdir`. `import.meta` has no
 * CommonJS form: the two uses the worker's code makes of it are given one.
 * Resolves to the package's own source files the bundles read.
 */
export async function bundleWorkerScript(root, outdir) {
  const { build } = await import('esbuild');
  const common = { ...nodeBundleOptions(root, outdir), outExtension: { '.js': '.cjs' }, format: 'cjs' };
  const worker = await build({
    ...common,
    entryPoints: { worker: 'electron/runtime/worker-main.ts' },
    define: { 'import.meta.url': 'importMetaUrl', 'import.meta.resolve': 'importMetaResolve' },
    banner: {
      js:
        "const importMetaUrl = require('node:url').pathToFileURL(__filename).href; " +
        "const importMetaResolve = (s) => require('node:url').pathToFileURL(require.resolve(s)).href;",
    },
  });
  const loader = await build({ ...common, entryPoints: { 'worker-loader': 'electron/runtime/worker-loader.cts' } });
  return [...ownSources(worker), ...ownSources(loader)];
}

/**
 * Write `outdir`/worker.cjs.cache: the worker runs the demo agent once, in a
 * folder of its own with the offline model, and its loader writes V8's code
 * cache of the script when it exits, the functions the run compiled included.
 * A worker that cannot run the demo is a broken build: this throws, saying why.
 */
export function writeWorkerCodeCache(outdir) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'waystation-worker-cache-'));
  try {
    const job = { kind: 'start', root: dir, taskId: 'code-cache', agentRef: { name: 'checkpoint-demo' }, options: {} };
    // Only what the run needs: no model key (so the offline model), HOME out of the way.
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      WAYSTATION_JOB: JSON.stringify(job),
      WAYSTATION_WORKER_CODE_CACHE: 'write',
      WAYSTATION_OFFLINE_LATENCY_MS: '0',
      SKIP_FAILURE: '1',
    };
    const r = spawnSync(process.execPath, [path.join(outdir, 'worker-loader.cjs')], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) {
      const said = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().slice(-2000);
      throw new Error(`the bundled worker could not run the demo to write its code cache (exit ${r.status ?? r.signal}): ${said}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

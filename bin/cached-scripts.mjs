// The scripts the compiled CLI runs from V8's code cache (`npm run build:lib`, bin/build-lib.mjs): the CLI,
// dist/bundle/cli.cjs, and the worker process, worker.cjs, each one CommonJS script beside its loader
// (electron/cli/cli-loader.cts, electron/runtime/worker-loader.cts; the cache's use: electron/runtime/cached-script.cts),
// and each script's cache, written from a run of it: the worker's from the demo agent, the CLI's from `ls` of the
// folder that run wrote.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeBundleOptions, ownSources } from './bundle-options.mjs';

/**
 * Bundle the CLI and the worker scripts and their loaders into `outdir`.
 * `import.meta` has no CommonJS form: the two uses the code makes of it are
 * given one. Code V8 takes from a cache has no import() in Node 20, so a
 * script that imports a package left out of the bundle with import() is
 * refused here (such code goes through electron/runtime/import-module.ts, or
 * require() for a CommonJS package). Resolves to the package's own source
 * files the bundles read.
 */
export async function bundleCachedScripts(root, outdir) {
  const { build } = await import('esbuild');
  const common = { ...nodeBundleOptions(root, outdir), outExtension: { '.js': '.cjs' }, format: 'cjs' };
  const scripts = await build({
    ...common,
    entryPoints: { cli: 'electron/cli/main.ts', worker: 'electron/runtime/worker-main.ts' },
    define: { 'import.meta.url': 'importMetaUrl', 'import.meta.resolve': 'importMetaResolve' },
    banner: {
      js:
        "const importMetaUrl = require('node:url').pathToFileURL(__filename).href; " +
        "const importMetaResolve = (s) => require('node:url').pathToFileURL(require.resolve(s)).href;",
    },
  });
  refuseDynamicImports(scripts.metafile);
  const loaders = await build({
    ...common,
    entryPoints: { 'cli-loader': 'electron/cli/cli-loader.cts', 'worker-loader': 'electron/runtime/worker-loader.cts' },
  });
  return [...ownSources(scripts), ...ownSources(loaders)];
}

/**
 * Throw when a bundle of `metafile` (esbuild's) imports a package left out of it with import(): code V8 takes
 * from a cache has no import() in Node 20, so that import would fail only when the script runs from its cache.
 */
export function refuseDynamicImports(metafile) {
  for (const [file, output] of Object.entries(metafile.outputs)) {
    const dynamic = output.imports.filter((i) => i.kind === 'dynamic-import' && i.external).map((i) => i.path);
    if (dynamic.length > 0)
      throw new Error(
        `${file} imports ${dynamic.join(', ')} with import(), which code run from V8's code cache does not have in Node 20: use importModule (electron/runtime/import-module.ts), or require() for a CommonJS package`,
      );
  }
}

/**
 * Write the code caches of the scripts in `outdir`: the worker runs the demo
 * agent once, in a folder of its own with the offline model, then the CLI
 * lists that folder; each loader writes V8's code cache of its script when
 * the process exits, the functions the run compiled included. A script that
 * cannot do its run is a broken build: this throws, saying why.
 */
export function writeCodeCaches(outdir) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'waystation-code-cache-'));
  try {
    const job = { kind: 'start', root: dir, taskId: 'code-cache', agentRef: { name: 'checkpoint-demo' }, options: {} };
    // Only what the runs need: no model key (so the offline model), HOME out of the way.
    const env = { PATH: process.env.PATH ?? '', HOME: dir, WAYSTATION_OFFLINE_LATENCY_MS: '0', SKIP_FAILURE: '1' };
    run('worker-loader.cjs', [], { ...env, WAYSTATION_JOB: JSON.stringify(job), WAYSTATION_WORKER_CODE_CACHE: 'write' });
    run('cli-loader.cjs', ['ls', dir], { ...env, WAYSTATION_CLI_CODE_CACHE: 'write' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  function run(loader, args, runEnv) {
    const r = spawnSync(process.execPath, [path.join(outdir, loader), ...args], {
      cwd: dir,
      env: runEnv,
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (r.status !== 0) {
      const said = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().slice(-2000);
      throw new Error(`the bundled ${loader} could not do its run to write its code cache (exit ${r.status ?? r.signal}): ${said}`);
    }
  }
}

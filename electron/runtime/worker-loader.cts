/**
 * The worker process's entry in the compiled CLI (dist/bundle/): it runs the
 * worker as one CommonJS script (worker.cjs, which `npm run build:lib`
 * bundles from worker-main.ts) with V8's code cache of that script
 * (worker.cjs.cache, which the build writes from a run of the demo agent).
 * Every worker compiles the same code the same way; with the cache it reads
 * what an earlier compile made instead, about 30 ms off each worker's start
 * (docs/BENCHMARKS.md). Node 20 has no compile cache for ES modules, hence
 * one CommonJS script.
 *
 * V8 refuses a cache made by another V8, with other flags or for another
 * build of the script, and the script is then compiled as it would be without
 * one: a cache can make a worker start slower, never run other code.
 * WAYSTATION_WORKER_CODE_CACHE=write writes the cache when the worker exits
 * (what the build does); =report says on stderr whether one was taken.
 *
 * A `.cts` file: tsc and esbuild emit it as CommonJS while the rest is ESM.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** The bundled worker beside this loader (worker-launch.ts looks for both), and V8's code cache of it. */
const WORKER_SCRIPT = 'worker.cjs';
const WORKER_CODE_CACHE = `${WORKER_SCRIPT}.cache`;

type CommonJsBody = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

function runWorker(dir: string): void {
  const script = path.join(dir, WORKER_SCRIPT);
  const cacheFile = path.join(dir, WORKER_CODE_CACHE);
  const mode = process.env.WAYSTATION_WORKER_CODE_CACHE;
  // The agent's own processes have no use for it.
  delete process.env.WAYSTATION_WORKER_CODE_CACHE;
  let cachedData: Buffer | undefined;
  if (mode !== 'write') {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // No cache (a build that could not write one): compiled as usual.
    }
  }
  // The wrapper Node gives every CommonJS module, so the script runs as it would through require().
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${readFileSync(script, 'utf8')}\n})`;
  const compiled = new vm.Script(wrapped, {
    filename: script,
    cachedData,
    // import() as an ES module has it, for the script compiled without a cache; with one, see below.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (mode === 'report') {
    const taken = cachedData === undefined ? 'none' : compiled.cachedDataRejected ? 'refused' : 'taken';
    process.stderr.write(`worker code cache: ${taken}\n`);
  }
  if (mode === 'write') {
    // At exit, once the run has compiled the functions it called: they are in the cache too.
    process.once('exit', () => {
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(tmp, compiled.createCachedData());
      renameSync(tmp, cacheFile);
    });
  }
  // Code V8 took from the cache has no import() of its own in Node 20; this module's is handed over under
  // import-module.ts's HANDED_IMPORT (named by its Symbol.for key: an ES module is not required from here).
  (globalThis as Record<symbol, unknown>)[Symbol.for('waystation.importModule')] = (specifier: string) => import(specifier);
  const body = compiled.runInThisContext() as CommonJsBody;
  const module = { exports: {} };
  body.call(module.exports, module.exports, createRequire(script), module, script, dir);
}

runWorker(__dirname);

/**
 * The worker process's entry in the compiled CLI (dist/bundle/): it runs the
 * worker as one CommonJS script (worker.cjs, which `npm run build:lib`
 * bundles from worker-main.ts) with V8's code cache of that script
 * (worker.cjs.cache, which the build writes from a run of the demo agent),
 * as code-cache-script.cts runs it. WAYSTATION_WORKER_CODE_CACHE=write writes
 * the cache when the worker exits; =report says whether one was taken.
 *
 * A `.cts` file: tsc and esbuild emit it as CommonJS while the rest is ESM.
 */
import { runCachedScript } from './code-cache-script.cjs';

// The bundled worker beside this loader (worker-launch.ts looks for both).
runCachedScript({ dir: __dirname, script: 'worker.cjs', variable: 'WAYSTATION_WORKER_CODE_CACHE', name: 'worker' });

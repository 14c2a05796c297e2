/**
 * The worker process's entry in the compiled CLI (dist/bundle/): it runs the
 * worker as one CommonJS script (worker.cjs, which `npm run build:lib`
 * bundles from worker-main.ts) with V8's code cache of it (worker.cjs.cache,
 * which the build writes from a run of the demo agent): see cached-script.cts.
 * WAYSTATION_WORKER_CODE_CACHE=write writes the cache when the worker exits;
 * =report says on stderr whether one was taken.
 */
import { runCachedScript } from './cached-script.cjs';

/** The bundled worker beside this loader (worker-launch.ts looks for it). */
const WORKER_SCRIPT = 'worker.cjs';

runCachedScript(__dirname, WORKER_SCRIPT, 'WAYSTATION_WORKER_CODE_CACHE', 'worker');

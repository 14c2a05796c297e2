/**
 * The compiled CLI's entry (dist/bundle/cli-loader.cjs, which bin/waystation.mjs
 * runs when the build matches the sources): it runs the command line as one
 * CommonJS script (cli.cjs, which `npm run build:lib` bundles from main.ts)
 * with V8's code cache of that script (cli.cjs.cache, written from a run of
 * the demo), as runtime/code-cache-script.cts runs it.
 * WAYSTATION_CLI_CODE_CACHE=write writes the cache when the command exits;
 * =report says whether one was taken.
 *
 * A command that hands its work to a worker starts that worker first: reading
 * and setting up the script takes a while, and the worker, the longer of the
 * two paths, loads meanwhile (early-worker.ts).
 *
 * Bundled as CommonJS; under tsc (the desktop build) an ES module nothing runs.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCachedScript } from '../runtime/code-cache-script.cjs';
import { startWorkerEarly } from './early-worker.js';

runCachedScript({
  dir: path.dirname(fileURLToPath(import.meta.url)),
  script: 'cli.cjs',
  variable: 'WAYSTATION_CLI_CODE_CACHE',
  name: 'CLI',
  beforeRead: () => startWorkerEarly(process.argv.slice(2)),
});

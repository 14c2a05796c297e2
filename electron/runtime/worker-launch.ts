/**
 * How a worker process is started: this build's own worker entry, through
 * tsx when the runtime runs from its TypeScript sources, as plain JavaScript
 * when it runs compiled (the library in dist/, the CLI as bin/waystation.mjs
 * starts it, the packaged app).
 *
 * A worker runs the build of the process that starts it, never the other:
 * agents written against the sources (tests, a checkout being edited) import
 * the runtime's sources, and a compiled worker beside them would hold a
 * second copy of the runtime. The start-up a TypeScript loader costs is saved
 * where users meet it, by the CLI starting compiled (bin/waystation.mjs).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Whether a runner's children (its workers, command agents) start in a process group of their own (`detached`). A
 * terminal sends Ctrl-C to its whole foreground group, and an agent cut off by it mid-effect leaves the effect
 * uncertain: apart, the key reaches the runner alone, which asks the run to stop at its next step or effect (the
 * CLI, cli/interrupt.ts) or ends its workers as it stops (a host). Not on Windows, where `detached` gives the child
 * a console window of its own.
 */
export const RUN_APART = process.platform !== 'win32';

/** A worker entry and the Node flags it needs. */
export interface WorkerLaunch {
  entry: string;
  execArgv?: string[];
}

/**
 * The entry of the CLI's bundle that runs the worker with V8's code cache (worker-loader.cts), and the script it
 * runs: the build writes both, and tsc emits the loader alone (the desktop build), so the script says which it is.
 */
const CACHED_ENTRY = 'worker-loader.cjs';
const CACHED_SCRIPT = 'worker.cjs';

/** The worker entry of this build. */
export function defaultWorkerLaunch(): Required<WorkerLaunch> {
  return workerLaunchFor(import.meta.url);
}

/**
 * The worker entry beside the module at `moduleUrl`: the sources' through
 * tsx; in the CLI's bundle (dist/bundle/, where `npm run build:lib` puts the
 * worker as one script with its code cache), the loader of that script;
 * otherwise (the library compiled by tsc, the desktop app) `worker-main.js`.
 */
export function workerLaunchFor(moduleUrl: string): Required<WorkerLaunch> {
  const here = path.dirname(fileURLToPath(moduleUrl));
  if (moduleUrl.endsWith('.ts')) {
    const tsx = createRequire(moduleUrl).resolve('tsx');
    return { entry: path.join(here, 'worker-main.ts'), execArgv: ['--import', pathToFileURL(tsx).href] };
  }
  return { entry: path.join(here, existsSync(path.join(here, CACHED_SCRIPT)) ? CACHED_ENTRY : 'worker-main.js'), execArgv: [] };
}

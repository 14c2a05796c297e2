/**
 * How a worker process is started: this build's own worker entry, as plain
 * JavaScript when the runtime runs compiled (the library in dist/, the
 * packaged app), and from the TypeScript sources through tsx otherwise.
 *
 * Running from the sources, the worker still starts from dist/ when that build
 * matches the sources (its stamp, see build-stamp.ts): a TypeScript loader
 * costs a worker several times node's own start-up, paid by every task.
 * WAYSTATION_FROM_SOURCE=1 keeps workers on the sources.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiledBuildState } from './build-stamp.js';

/** A worker entry and the Node flags it needs. */
export interface WorkerLaunch {
  entry: string;
  execArgv?: string[];
}

const here = path.dirname(fileURLToPath(import.meta.url));
const isTs = import.meta.url.endsWith('.ts');
const packageRoot = path.resolve(here, '..', '..');

/** The worker entry of this build. */
export function defaultWorkerLaunch(env: NodeJS.ProcessEnv = process.env): Required<WorkerLaunch> {
  if (!isTs) return { entry: path.join(here, 'worker-main.js'), execArgv: [] };
  // Checked at every launch, not once: a long-running host from the sources sees an edit made since.
  if (!env.WAYSTATION_FROM_SOURCE && compiledBuildState(packageRoot).state === 'fresh') {
    return { entry: path.join(packageRoot, 'dist', 'electron', 'runtime', 'worker-main.js'), execArgv: [] };
  }
  const tsx = createRequire(import.meta.url).resolve('tsx');
  return { entry: path.join(here, 'worker-main.ts'), execArgv: ['--import', pathToFileURL(tsx).href] };
}

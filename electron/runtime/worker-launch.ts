/**
 * How a worker process is started: this build's own worker entry, through
 * tsx when the runtime runs from its TypeScript sources, as plain JavaScript
 * when it runs compiled (the library in dist/, the packaged app).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A worker entry and the Node flags it needs. */
export interface WorkerLaunch {
  entry: string;
  execArgv?: string[];
}

const here = path.dirname(fileURLToPath(import.meta.url));
const isTs = import.meta.url.endsWith('.ts');

/** The worker entry of this build. */
export function defaultWorkerLaunch(): Required<WorkerLaunch> {
  const entry = path.join(here, isTs ? 'worker-main.ts' : 'worker-main.js');
  if (!isTs) return { entry, execArgv: [] };
  const tsx = createRequire(import.meta.url).resolve('tsx');
  return { entry, execArgv: ['--import', pathToFileURL(tsx).href] };
}

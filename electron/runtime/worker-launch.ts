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

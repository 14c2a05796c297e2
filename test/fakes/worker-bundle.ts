/**
 * Build the worker (and agent modules) into plain JavaScript once per test
 * file, so the hundreds of worker processes a crash test starts skip the
 * TypeScript loader.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { bundleForNode } from '../support/node-bundle.js';

export interface WorkerBundle {
  /** For RunnerOptions.workerLaunch. */
  workerLaunch: { entry: string; execArgv: string[] };
  /** The bundled file of each extra entry, by its source path relative to the repository. */
  modules: Record<string, string>;
  dispose(): Promise<void>;
}

/** Bundle worker-main plus the given agent modules (paths relative to the repository). */
export async function bundleWorker(agentModules: string[] = []): Promise<WorkerBundle> {
  const entries = ['electron/runtime/worker-main.ts', ...agentModules];
  const outdir = await bundleForNode(Object.fromEntries(entries.map((e) => [path.basename(e, '.ts'), e])), 'worker-', '.mjs');
  return {
    workerLaunch: { entry: path.join(outdir, 'worker-main.mjs'), execArgv: [] },
    modules: Object.fromEntries(agentModules.map((m) => [m, path.join(outdir, `${path.basename(m, '.ts')}.mjs`)])),
    dispose: () => fs.rm(outdir, { recursive: true, force: true }),
  };
}

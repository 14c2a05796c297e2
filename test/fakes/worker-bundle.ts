/**
 * Build the worker (and agent modules) into plain JavaScript once per test
 * file, so the hundreds of worker processes a crash test starts skip the
 * TypeScript loader. Output goes under the repository's `.waystation-tmp/`
 * (git-ignored), where `node_modules` still resolves.
 */
import { build } from 'esbuild';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface WorkerBundle {
  /** For RunnerOptions.workerLaunch. */
  workerLaunch: { entry: string; execArgv: string[] };
  /** The bundled file of each extra entry, by its source path relative to the repository. */
  modules: Record<string, string>;
  dispose(): Promise<void>;
}

/** Bundle worker-main plus the given agent modules (paths relative to the repository). */
export async function bundleWorker(agentModules: string[] = []): Promise<WorkerBundle> {
  const base = path.join(repo, '.waystation-tmp');
  await fs.mkdir(base, { recursive: true });
  const outdir = await fs.mkdtemp(path.join(base, 'worker-'));
  const entries = ['electron/runtime/worker-main.ts', ...agentModules];
  await build({
    entryPoints: Object.fromEntries(entries.map((e) => [path.basename(e, '.ts'), path.join(repo, e)])),
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return {
    workerLaunch: { entry: path.join(outdir, 'worker-main.mjs'), execArgv: [] },
    modules: Object.fromEntries(agentModules.map((m) => [m, path.join(outdir, `${path.basename(m, '.ts')}.mjs`)])),
    dispose: () => fs.rm(outdir, { recursive: true, force: true }),
  };
}

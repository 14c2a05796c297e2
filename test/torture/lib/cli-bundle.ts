/**
 * The `waystation` CLI and its workers built as the product's build builds
 * them (bin/cached-scripts.mjs): one CommonJS script each, started by its
 * loader from V8's code cache, the CLI's loader starting the worker of `run`,
 * `resume` and `approve` before it reads its script. So the thousands of
 * runner and worker processes the scenarios start, and kill, go through what
 * `waystation` runs, and skip the TypeScript loader. Everything lands in one
 * folder, where the CLI's runner finds the worker as its own build's entry and
 * the store its file checks' thread.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { bundleCachedScripts, writeCodeCaches } from '../../../bin/cached-scripts.mjs';
import { bundleForNode, REPO } from '../../support/node-bundle.js';

export { REPO } from '../../support/node-bundle.js';

export interface CliBundle {
  /** Run it as `node <cli> ARGS...`. */
  cli: string;
  dispose(): Promise<void>;
}

/** Build the CLI, its worker and the file checks' thread side by side, with both code caches. */
export async function bundleCli(): Promise<CliBundle> {
  const outdir = await bundleForNode({ 'file-check-worker': 'electron/store/file-check-worker.ts' }, 'torture-cli-');
  await bundleCachedScripts(REPO, outdir);
  writeCodeCaches(outdir);
  return { cli: path.join(outdir, 'cli-loader.cjs'), dispose: () => fs.rm(outdir, { recursive: true, force: true }) };
}

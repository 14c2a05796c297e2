/**
 * The `waystation` CLI and its worker built into plain JavaScript once, so the
 * thousands of runner and worker processes the crash scenario starts skip the
 * TypeScript loader. Both land in one folder, where the CLI's runner finds the
 * worker as its own build's entry. Output goes under the repository's
 * `.waystation-tmp/` (git-ignored), where `node_modules` still resolves.
 */
import { build } from 'esbuild';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface CliBundle {
  /** Run it as `node <cli> ARGS...`. */
  cli: string;
  dispose(): Promise<void>;
}

/** Bundle electron/cli/main.ts and electron/runtime/worker-main.ts side by side. */
export async function bundleCli(): Promise<CliBundle> {
  const base = path.join(REPO, '.waystation-tmp');
  await fs.mkdir(base, { recursive: true });
  const outdir = await fs.mkdtemp(path.join(base, 'torture-cli-'));
  await build({
    entryPoints: { 'waystation-cli': path.join(REPO, 'electron/cli/main.ts'), 'worker-main': path.join(REPO, 'electron/runtime/worker-main.ts') },
    outdir,
    // .js, as the runner of a compiled build looks for worker-main.js; the repository's package.json makes it ESM.
    outExtension: { '.js': '.js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return { cli: path.join(outdir, 'waystation-cli.js'), dispose: () => fs.rm(outdir, { recursive: true, force: true }) };
}

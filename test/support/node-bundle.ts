/**
 * Parts of Waystation built into plain JavaScript, so the many processes a
 * test starts skip the TypeScript loader. Output goes under the repository's
 * `.waystation-tmp/` (git-ignored), where `node_modules`, the repository's
 * package.json and `dist-renderer/` resolve as they do from the sources.
 */
import { build } from 'esbuild';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Bundle `entries` (output name to source path, relative to the repository) into a new folder.
 *
 * The folder is named `<prefix><random>`; remove it when done. Packages stay
 * external. With `.js` output the repository's package.json makes the files
 * ESM, which is what a compiled build's runner looks for (`worker-main.js`).
 */
export async function bundleForNode(entries: Record<string, string>, prefix: string, extension: '.js' | '.mjs' = '.js'): Promise<string> {
  const base = path.join(REPO, '.waystation-tmp');
  await fs.mkdir(base, { recursive: true });
  const outdir = await fs.mkdtemp(path.join(base, prefix));
  await build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, source]) => [name, path.join(REPO, source)])),
    outdir,
    outExtension: { '.js': extension },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return outdir;
}

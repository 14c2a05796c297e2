#!/usr/bin/env node
// `npm run build:lib` (and `prepare`, so `npm ci` runs it): compiles the library, the
// CLI and the worker into dist/, bundles the CLI and the worker (dist/bundle/, what
// bin/waystation.mjs runs; each as one script with V8's code cache of it,
// cached-scripts.mjs), then stamps the build with the sources it read and when
// it started (electron/runtime/build-stamp.ts), so the launcher runs dist/ only while
// it matches the sources. The stamp is removed first: a failed or interrupted build
// leaves none, and the launcher falls back to the sources.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nodeBundleOptions, ownSources } from './bundle-options.mjs';
import { bundleCachedScripts, writeCodeCaches } from './cached-scripts.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
rmSync(path.join(root, 'dist', 'build-stamp.json'), { force: true });

// Taken before the compiler reads anything: a source saved during the build is newer, so the build counts as stale.
const startedAtMs = Date.now();
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.lib.json', '--listFiles', ...process.argv.slice(2)], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 64 * 1024 * 1024,
});
const lines = (r.stdout ?? '').split('\n');
const inside = (line) => path.isAbsolute(line) && !path.relative(root, line).startsWith('..');
const own = lines.filter((l) => inside(l) && !l.split(/[\\/]/).includes('node_modules'));
// Everything else tsc printed (diagnostics) goes through; the list of the library's own .d.ts files does not.
const rest = lines.filter((l) => l && !inside(l));
if (rest.length) process.stdout.write(rest.join('\n') + '\n');
if (r.status !== 0) {
  console.error(`build:lib failed (tsc exited ${r.status ?? r.signal}); dist/ is not stamped, so \`waystation\` runs from the sources.`);
  process.exit(r.status ?? 1);
}

let bundled;
try {
  bundled = await bundleThreadEntry();
  const outdir = path.join(root, 'dist', 'bundle');
  bundled.push(...(await bundleCachedScripts(root, outdir)));
  writeCodeCaches(outdir);
} catch (err) {
  console.error(`build:lib failed bundling the CLI (${err.message}); dist/ is not stamped, so \`waystation\` runs from the sources.`);
  process.exit(1);
}

const { writeBuildStamp } = await import(pathToFileURL(path.join(root, 'dist', 'electron', 'runtime', 'build-stamp.js')).href);
// This script too: a build made by an older one may lack what the launcher now runs.
writeBuildStamp(root, startedAtMs, [
  ...own,
  ...bundled,
  'tsconfig.json',
  'tsconfig.lib.json',
  'bin/build-lib.mjs',
  'bin/bundle-options.mjs',
  'bin/cached-scripts.mjs',
]);

/**
 * Bundle the file checks' thread into dist/bundle/, emptied first: the store
 * starts that thread from the entry beside the code that starts it (the CLI's
 * and the worker's scripts sit there too), as an ES module of its own.
 * Resolves to the package's own source files it read, for the stamp.
 */
async function bundleThreadEntry() {
  const { build } = await import('esbuild');
  const outdir = path.join(root, 'dist', 'bundle');
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    ...nodeBundleOptions(root, outdir),
    entryPoints: { 'file-check-worker': 'electron/store/file-check-worker.ts' },
    format: 'esm',
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  return ownSources(result);
}

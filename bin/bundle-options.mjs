// What the package's builds for Node share (bin/build-lib.mjs: the file checks' thread; bin/cached-scripts.mjs:
// the CLI's and the worker's scripts): one target, one list of packages left out, zod in English only, and the sources each read.
import path from 'node:path';

/**
 * esbuild's options for a bundle of `root`'s code into `outdir`, for Node.
 * Packages that must be found at run time stay outside: the native SQLite
 * binding, tsx (registered for TypeScript agents), pg (loaded only for a
 * database) and electron.
 */
export function nodeBundleOptions(root, outdir) {
  return {
    absWorkingDir: root,
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    external: ['better-sqlite3', 'tsx', 'pg', 'electron'],
    plugins: [englishZodMessages()],
    metafile: true,
    logLevel: 'warning',
  };
}

/** The package's own source files a bundle read (for the build stamp): its inputs outside node_modules. */
export function ownSources(result) {
  return Object.keys(result.metafile.inputs).filter((f) => !f.split('/').includes('node_modules'));
}

/**
 * zod's messages in English only, in the bundle: zod sets English up itself,
 * Waystation never switches (`z.locales` is used nowhere), and its other
 * forty-odd languages are half of what a command would otherwise compile at
 * start. `z.locales.en` stays; an agent's own zod, from node_modules, keeps all of them.
 */
function englishZodMessages() {
  return { name: 'english-zod-messages', setup: keepEnglishOnly };
}
function keepEnglishOnly(build) {
  build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
    args.importer.split(path.sep).join('/').includes('/node_modules/zod/v4/')
      ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-english' }
      : undefined,
  );
  build.onLoad({ filter: /.*/, namespace: 'zod-english' }, (args) => ({
    contents: `export { default as en } from ${JSON.stringify(args.path)};`,
    resolveDir: path.dirname(args.path),
  }));
}

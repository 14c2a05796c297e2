// Types of bin/cached-scripts.mjs, a build script in plain JavaScript (it runs before anything is compiled).

/** Bundle the CLI and worker scripts and their loaders into `outdir`; resolves to the package's own source files they read. */
export function bundleCachedScripts(root: string, outdir: string): Promise<string[]>;

/** Write the code caches of the CLI and worker scripts in `outdir` from a run of each; throws, saying why, when one cannot run. */
export function writeCodeCaches(outdir: string): void;

/** Throw, naming them, when a bundle of esbuild's `metafile` imports a package left out of it with import(). */
export function refuseDynamicImports(metafile: {
  outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }>;
}): void;

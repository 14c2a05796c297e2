// Types of bin/cached-scripts.mjs, a build script in plain JavaScript (it runs before anything is compiled).

/** Bundle the CLI's and the worker's scripts and their loaders into `outdir`; resolves to the package's own source files they read. */
export function bundleCachedScripts(root: string, outdir: string): Promise<string[]>;

/** Write `outdir`/worker.cjs.cache and cli.cjs.cache from runs of the demo agent; throws, saying why, when one cannot run it. */
export function writeCodeCaches(outdir: string): void;

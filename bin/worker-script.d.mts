// Types of bin/worker-script.mjs, a build script in plain JavaScript (it runs before anything is compiled).

/** Bundle the worker script and its loader into `outdir`; resolves to the package's own source files they read. */
export function bundleWorkerScript(root: string, outdir: string): Promise<string[]>;

/** Write `outdir`/worker.cjs.cache from a run of the demo agent; throws, saying why, when the worker cannot run it. */
export function writeWorkerCodeCache(outdir: string): void;

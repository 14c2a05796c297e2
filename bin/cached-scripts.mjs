// The two processes of the compiled CLI (`npm run build:lib`, bin/build-lib.mjs) as they start: each one CommonJS
// script in dist/bundle/ run by a loader beside it with V8's code cache of the script
// (electron/runtime/code-cache-script.cts). The command line: cli.cjs, cli-loader.cjs, cli.cjs.cache; the worker:
// worker.cjs, worker-loader.cjs, worker.cjs.cache. Both caches are written from a run of the demo agent.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeBundleOptions, ownSources } from './bundle-options.mjs';

/** Each script: its entry in the sources, its loader's. */
const SCRIPTS = {
  cli: { entry: 'electron/cli/main.ts', loader: 'electron/cli/cli-loader.ts' },
  worker: { entry: 'electron/runtime/worker-main.ts', loader: 'electron/runtime/worker-loader.cts' },
};

/**
 * Bundle both scripts and their loaders into `outdir`. `import.meta` has no
 * CommonJS form: the two uses the code makes of it are given one (the CLI's
 * loader, which starts a worker early, makes one too). Resolves to the
 * package's own source files the bundles read.
 */
export async function bundleCachedScripts(root, outdir) {
  const { build } = await import('esbuild');
  const common = {
    ...nodeBundleOptions(root, outdir),
    outExtension: { '.js': '.cjs' },
    format: 'cjs',
    define: { 'import.meta.url': 'importMetaUrl', 'import.meta.resolve': 'importMetaResolve' },
    banner: {
      js:
        "const importMetaUrl = require('node:url').pathToFileURL(__filename).href; " +
        "const importMetaResolve = (s) => require('node:url').pathToFileURL(require.resolve(s)).href;",
    },
  };
  const read = [];
  for (const [name, { entry, loader }] of Object.entries(SCRIPTS)) {
    const script = await build({ ...common, entryPoints: { [name]: entry } });
    const loaderBuild = await build({ ...common, entryPoints: { [`${name}-loader`]: loader } });
    read.push(...ownSources(script), ...ownSources(loaderBuild));
  }
  return read;
}

/**
 * Write both code caches: the worker's from a worker running the demo agent,
 * then the CLI's from `waystation run DIR checkpoint-demo` (whose worker now
 * takes its cache), each in a folder of its own with the offline model; each
 * loader writes its script's cache when its process exits, the functions the
 * run compiled included. A script that cannot run the demo is a broken build:
 * this throws, saying why.
 */
export function writeCodeCaches(outdir) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'waystation-code-cache-'));
  try {
    const workerRoot = path.join(dir, 'worker');
    const job = { kind: 'start', root: workerRoot, taskId: 'code-cache', agentRef: { name: 'checkpoint-demo' }, options: {} };
    runForCache('worker', outdir, dir, workerRoot, [], { WAYSTATION_JOB: JSON.stringify(job), WAYSTATION_WORKER_CODE_CACHE: 'write' });
    const cliRoot = path.join(dir, 'cli');
    runForCache('cli', outdir, dir, cliRoot, ['run', cliRoot, 'checkpoint-demo', '--task', 'code-cache'], {
      WAYSTATION_CLI_CODE_CACHE: 'write',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Run `name`'s loader on the demo, writing its cache; the demo's task in `root` must end done. */
function runForCache(name, outdir, dir, root, args, vars) {
  // Only what the run needs: no model key (so the offline model), HOME out of the way.
  const env = { PATH: process.env.PATH ?? '', HOME: dir, WAYSTATION_OFFLINE_LATENCY_MS: '0', SKIP_FAILURE: '1', NO_COLOR: '1', ...vars };
  const r = spawnSync(process.execPath, [path.join(outdir, `${name}-loader.cjs`), ...args], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.status !== 0) {
    const said = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().slice(-2000);
    throw new Error(`the bundled ${name} could not run the demo to write its code cache (exit ${r.status ?? r.signal}): ${said}`);
  }
  // A script that ran nothing (its entry not started) would write a cache of its top level alone.
  const checkpoint = path.join(root, 'code-cache', 'checkpoint.json');
  const status = existsSync(checkpoint) ? JSON.parse(readFileSync(checkpoint, 'utf8')).status : 'missing';
  if (status !== 'done') throw new Error(`the bundled ${name} did not run the demo to write its code cache (its task is ${status})`);
}

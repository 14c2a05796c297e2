/**
 * Running one bundled CommonJS script with V8's code cache of it: how the
 * compiled CLI starts its two kinds of process (dist/bundle/, written by
 * `npm run build:lib`): the command itself (cli.cjs, through
 * electron/cli/cli-loader.ts) and each worker (worker.cjs, through
 * worker-loader.cts). Every start compiles the same code the same way; with
 * the cache it reads what an earlier compile made instead (docs/BENCHMARKS.md
 * has the figures). Node 20 has no compile cache for ES modules, hence one
 * CommonJS script each.
 *
 * V8 refuses a cache made by another V8, with other flags or for another
 * build of the script, and the script is then compiled as it would be without
 * one: a cache can make a start slower, never run other code. The script's
 * variable set to `write` writes the cache when the process exits, once the
 * run has compiled the functions it called (what the build does); `report`
 * says on stderr whether one was taken.
 *
 * A `.cts` file: tsc and esbuild emit it as CommonJS while the rest is ESM.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** One script a loader runs. */
export interface CachedScript {
  /** The folder holding the script and its cache: the loader's own. */
  dir: string;
  /** The script's file name; its cache is the same name with `.cache` added. */
  script: string;
  /** The environment variable that asks for `write` or `report`. */
  variable: string;
  /** What the report calls it: "worker", "CLI". */
  name: string;
  /** What to start before the script is read, with the variable already gone from the environment. */
  beforeRead?: () => void;
}

type CommonJsBody = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/** Run `s.script` as CommonJS, from its code cache when V8 takes it. */
export function runCachedScript(s: CachedScript): void {
  const script = path.join(s.dir, s.script);
  const cacheFile = `${script}.cache`;
  const mode = process.env[s.variable];
  // The processes the script starts (a worker, an agent's own) have no use for it.
  delete process.env[s.variable];
  s.beforeRead?.();
  let cachedData: Buffer | undefined;
  if (mode !== 'write') {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // No cache (a build that could not write one): compiled as usual.
    }
  }
  // The wrapper Node gives every CommonJS module, so the script runs as it would through require().
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${readFileSync(script, 'utf8')}\n})`;
  const compiled = new vm.Script(wrapped, {
    filename: script,
    cachedData,
    // import() as an ES module has it, for the script compiled without a cache; with one, see below.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (mode === 'report') {
    const taken = cachedData === undefined ? 'none' : compiled.cachedDataRejected ? 'refused' : 'taken';
    process.stderr.write(`${s.name} code cache: ${taken}\n`);
  }
  if (mode === 'write') {
    // At exit, once the run has compiled the functions it called: they are in the cache too.
    process.once('exit', () => {
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(tmp, compiled.createCachedData());
      renameSync(tmp, cacheFile);
    });
  }
  // Code V8 took from the cache has no import() of its own in Node 20; this module's is handed over under
  // import-module.ts's HANDED_IMPORT (named by its Symbol.for key: an ES module is not required from here).
  (globalThis as Record<symbol, unknown>)[Symbol.for('waystation.importModule')] = (specifier: string) => import(specifier);
  const body = compiled.runInThisContext() as CommonJsBody;
  const module = { exports: {} };
  body.call(module.exports, module.exports, createRequire(script), module, script, s.dir);
}

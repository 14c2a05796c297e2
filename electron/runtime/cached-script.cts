/**
 * Running one of the compiled CLI's CommonJS scripts (dist/bundle/cli.cjs,
 * worker.cjs, which `npm run build:lib` bundles) with V8's code cache of it
 * (the script's name with `.cache`, which the build writes from a run of
 * it). Every process compiles the same code the same way; with the cache it
 * reads what an earlier compile made instead, some 30 to 50 ms off each start
 * (docs/BENCHMARKS.md). Node 20 has no compile cache for ES modules, hence
 * CommonJS scripts.
 *
 * V8 refuses a cache made by another V8, with other flags or for another
 * build of the script, and the script is then compiled as it would be without
 * one: a cache can make a start slower, never run other code. The variable
 * the loader names set to `write` writes the cache when the process exits
 * (what the build does); `report` says on stderr whether one was taken.
 *
 * A `.cts` file: tsc and esbuild emit it as CommonJS while the rest is ESM.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

type CommonJsBody = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/**
 * Run `dir`/`name` as CommonJS, with its code cache `dir`/`name`.cache; `variable` is the environment variable
 * that asks for the cache to be written or reported (`label` names the script in the report). The variable is
 * removed first: the processes the script starts have no use for it.
 */
export function runCachedScript(dir: string, name: string, variable: string, label: string): void {
  const script = path.join(dir, name);
  const cacheFile = `${script}.cache`;
  const mode = process.env[variable];
  delete process.env[variable];
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
    process.stderr.write(`${label} code cache: ${taken}\n`);
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
  body.call(module.exports, module.exports, createRequire(script), module, script, dir);
}

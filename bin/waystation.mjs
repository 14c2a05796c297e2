#!/usr/bin/env node
// The `waystation` command. Runs the bundled CLI in dist/bundle/ (built by `npm ci`
// through `prepare`, or `npm run build:lib`: one CommonJS script its loader runs with
// V8's code cache, electron/cli/cli-loader.ts) when its build stamp matches the sources; otherwise
// the TypeScript sources through tsx, which works the same but starts several times
// slower. In a development checkout an edited source therefore never runs as old
// compiled code. WAYSTATION_FROM_SOURCE=1 always runs the sources.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Whether dist/ can be run: the stamp check of electron/runtime/build-stamp.ts, compiled beside the CLI it vouches for. */
async function buildState() {
  if (process.env.WAYSTATION_FROM_SOURCE) return { state: 'forced' };
  let stampModule;
  try {
    stampModule = await import('../dist/electron/runtime/build-stamp.js');
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    return { state: 'missing', reason: 'there is no compiled build (dist/ is missing)' };
  }
  return stampModule.compiledBuildState(root);
}

const build = await buildState();
if (build.state === 'fresh') {
  createRequire(import.meta.url)('../dist/bundle/cli-loader.cjs');
} else {
  // Said on a terminal only: scripts reading stderr get the command's own messages and nothing else.
  if (build.state !== 'forced' && process.stderr.isTTY) {
    process.stderr.write(
      `waystation: running from the TypeScript sources (slower to start): ${build.reason}. ` +
        '`npm run build:lib` compiles dist/ again.\n',
    );
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import('../electron/cli/main.ts');
}

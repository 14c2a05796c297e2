/**
 * The `waystation` command in the compiled CLI (dist/bundle/), what
 * bin/waystation.mjs runs: the CLI as one CommonJS script (cli.cjs, which
 * `npm run build:lib` bundles from main.ts) with V8's code cache of it
 * (cli.cjs.cache, which the build writes from a run of `waystation ls`):
 * see cached-script.cts. WAYSTATION_CLI_CODE_CACHE=write writes the cache
 * when the command exits; =report says on stderr whether one was taken.
 */
import { runCachedScript } from '../runtime/cached-script.cjs';

/** The bundled CLI beside this loader. */
const CLI_SCRIPT = 'cli.cjs';

runCachedScript(__dirname, CLI_SCRIPT, 'WAYSTATION_CLI_CODE_CACHE', 'cli');

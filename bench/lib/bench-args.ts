/**
 * The command line of a bench script: `--help` prints the script's own doc
 * comment (where its options are described, once), and a mistyped option or a
 * count that is not one ends the run in one line, exit 2, before anything is
 * measured: a bench is minutes of a machine's time, and a typo found at the
 * end of it, or a stack trace instead of a sentence, wastes them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** End the run on a bad command line: one line on stderr, exit 2. */
export function usageError(message: string): never {
  console.error(`${message} (--help lists the options)`);
  process.exit(2);
}

/**
 * The options of the script at `scriptUrl` (its `import.meta.url`), parsed by `parseArgs` with `options`, strict
 * and without positionals. `--help` (or `-h`) prints the script's first doc comment and exits 0.
 */
export function benchOptions<O extends Options>(scriptUrl: string, options: O, args: string[] = process.argv.slice(2)) {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(scriptUsage(scriptUrl));
    process.exit(0);
  }
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    // parseArgs says what was wrong in a sentence of its own; its stack says nothing to a person running a bench.
    return usageError(err instanceof Error ? err.message.split('\n')[0] : String(err));
  }
}

/** The first doc comment of a script, its ` * ` margins taken off: where each bench describes how it is run. */
export function scriptUsage(scriptUrl: string): string {
  const source = readFileSync(fileURLToPath(scriptUrl), 'utf8');
  const doc = /\/\*\*([\s\S]*?)\*\//.exec(source)?.[1];
  if (!doc) return `no description in ${fileURLToPath(scriptUrl)}`;
  return doc
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

/** The whole number option `name` gave as `raw`, at least `min`; `fallback` when it was not given. */
export function wholeNumber(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(n) || n < min) usageError(`--${name} takes a whole number of at least ${min}, got "${raw}"`);
  return n;
}

/** The comma-separated whole numbers option `name` gave as `raw`, each at least `min` (an empty list when `raw` is empty). */
export function wholeNumbers(name: string, raw: string, min: number): number[] {
  const numbers = raw.trim() === '' ? [] : raw.split(',').map((s) => (s.trim() === '' ? Number.NaN : Number(s.trim())));
  if (numbers.some((n) => !Number.isInteger(n) || n < min))
    usageError(`--${name} takes whole numbers of at least ${min}, separated by commas; got "${raw}"`);
  return numbers;
}

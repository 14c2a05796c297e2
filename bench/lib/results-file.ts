/**
 * Where a benchmark leaves its machine-readable results: bench/results/
 * (ignored by git), one JSON file per benchmark and day.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** bench/results/ of this checkout, whatever the current directory. */
export const RESULTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'results');

/**
 * Write `data` as `<dir>/<name>-<YYYY-MM-DD>.json` and return the path.
 *
 * A later run on the same day replaces the file: the report always quotes
 * the newest figures. Written to a temp file and renamed, so an interrupted
 * run never leaves half a JSON document behind.
 */
export async function writeResultsFile(name: string, data: unknown, dir: string = RESULTS_DIR, now: Date = new Date()): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}-${now.toISOString().slice(0, 10)}.json`);
  const temp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temp, JSON.stringify(data, null, 2) + '\n');
  await fs.rename(temp, file);
  return file;
}

/**
 * The compiled build's stamp: which sources `npm run build:lib` compiled into
 * dist/ and when it started, so a launcher can tell whether dist/ still holds
 * the code of the sources as they are now.
 *
 * A development checkout edits sources without rebuilding; running dist/ then
 * would silently run old code. The rule is therefore conservative: the build
 * is fresh only when every source it was compiled from still exists and none
 * was modified after the build started. An installed package (files unpacked
 * with one old timestamp) is always fresh; an edited, checked-out or renamed
 * source makes it stale, and the launcher runs the sources instead.
 *
 * Checking costs one small file read and one stat per source (about a hundred),
 * well under a millisecond on a warm disk: cheaper than any other way of
 * knowing, and far cheaper than the TypeScript loader it saves.
 */
import * as fs from 'node:fs';
import path from 'node:path';

/** Where the stamp sits, relative to the package root. */
export const BUILD_STAMP_FILE = 'dist/build-stamp.json';

/** What the stamp records. */
export interface BuildStamp {
  format: 1;
  /** When the compiler started reading the sources, in ms since the epoch. */
  started_at_ms: number;
  /** The package's own files the compiler read (sources and configuration), relative, with forward slashes. */
  sources: string[];
}

/** Whether dist/ can be run, and if not, why. */
export type BuildState = { state: 'fresh' } | { state: 'missing'; reason: string } | { state: 'stale'; reason: string; changed: string };

/** Write the stamp of a build that started at `startedAtMs` and read `sources` (absolute or relative to `packageRoot`). */
export function writeBuildStamp(packageRoot: string, startedAtMs: number, sources: readonly string[]): void {
  const stamp: BuildStamp = {
    format: 1,
    started_at_ms: startedAtMs,
    sources: [...new Set(sources.map((s) => path.relative(packageRoot, path.resolve(packageRoot, s)).split(path.sep).join('/')))].sort(),
  };
  const file = path.join(packageRoot, BUILD_STAMP_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(stamp, null, 2) + '\n');
  fs.renameSync(tmp, file);
}

/** Remove the stamp, so a build that fails half-way is never taken for a fresh one. */
export function removeBuildStamp(packageRoot: string): void {
  fs.rmSync(path.join(packageRoot, BUILD_STAMP_FILE), { force: true });
}

function readStamp(packageRoot: string): BuildStamp | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(packageRoot, BUILD_STAMP_FILE), 'utf8');
  } catch {
    return null;
  }
  try {
    const stamp = JSON.parse(text) as Partial<BuildStamp>;
    if (stamp.format !== 1 || typeof stamp.started_at_ms !== 'number' || !Array.isArray(stamp.sources)) return null;
    return stamp as BuildStamp;
  } catch {
    return null;
  }
}

/**
 * Whether the compiled build under `packageRoot` matches its sources.
 *
 * `missing` when there is no readable stamp (never built, a build that failed
 * or was interrupted, a stamp of another format); `stale` naming the first
 * source that is gone or newer than the build.
 */
export function compiledBuildState(packageRoot: string): BuildState {
  const stamp = readStamp(packageRoot);
  if (!stamp) return { state: 'missing', reason: `there is no compiled build (${BUILD_STAMP_FILE} is missing)` };
  for (const rel of stamp.sources) {
    const stats = fs.statSync(path.join(packageRoot, rel), { throwIfNoEntry: false });
    if (!stats) return { state: 'stale', reason: `${rel} is gone since the last build`, changed: rel };
    if (stats.mtimeMs > stamp.started_at_ms) return { state: 'stale', reason: `${rel} changed since the last build`, changed: rel };
  }
  return { state: 'fresh' };
}

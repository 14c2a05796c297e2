/**
 * The page's first script: what renderer/src/main.tsx loads before its first
 * render. zod and the contract's schemas are not in it (they load beside the
 * first requests, for the event stream's check: http-client.ts), so the
 * first rows do not wait for the schemas to be built.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const ENTRY = 'renderer/src/main.tsx';

async function metafileOf(entry: string): Promise<Metafile> {
  const result = await build({
    absWorkingDir: repo,
    entryPoints: [entry],
    outdir: path.join(repo, 'dist', 'first-script-check'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    loader: { '.css': 'empty' },
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  return result.metafile;
}

/** The modules `entry` reaches through static imports, each with the module that first led to it. */
function staticallyReached(meta: Metafile, entry: string): Map<string, string | null> {
  const reached = new Map<string, string | null>([[entry, null]]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const imp of meta.inputs[file]?.imports ?? []) {
      if (imp.kind === 'dynamic-import' || imp.external || reached.has(imp.path)) continue;
      reached.set(imp.path, file);
      queue.push(imp.path);
    }
  }
  return reached;
}

function chain(reached: Map<string, string | null>, file: string): string {
  const links = [file];
  for (let at = reached.get(file); at; at = reached.get(at)) links.push(at);
  return links.reverse().join(' -> ');
}

describe("the page's first script", () => {
  it('holds no zod: the schemas load beside the first requests, through the event check', async () => {
    const meta = await metafileOf(ENTRY);
    const reached = staticallyReached(meta, ENTRY);
    const zod = [...reached.keys()].filter((f) => f.includes('node_modules/zod/'));
    expect(zod.map((f) => chain(reached, f)).slice(0, 3)).toEqual([]);
    // The contract is still what checks the stream's events: loaded by the page, only later.
    const dynamic = Object.entries(meta.inputs).flatMap(([file, input]) =>
      reached.has(file) ? input.imports.filter((i) => i.kind === 'dynamic-import').map((i) => i.path) : [],
    );
    expect(dynamic).toContain('shared/api/contract.ts');
  });
});

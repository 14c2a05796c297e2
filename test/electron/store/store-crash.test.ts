import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../../electron/store/directory-store.js';
import { cleanup, readVersionFileStrict, tempRoot } from './store-test-helpers.js';
import { HISTORY_INDEX_FILE } from '../../../electron/store/history-index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const writer = path.join(here, 'crash-writer.ts');
/** Kills per run; raise with WAYSTATION_CRASH_KILLS for a longer soak. */
const KILLS = Number(process.env.WAYSTATION_CRASH_KILLS ?? 30);

interface Run {
  saved: number;
  ready: number | null;
}

/** Start the writer, let it run for a random moment after it is ready, then SIGKILL it. */
function runAndKill(root: string, killAfterMs: number | null): Promise<Run> {
  return new Promise((resolve, reject) => {
    const args = bundled ? [bundled, root] : ['--import', 'tsx', writer, root];
    const child = spawn(process.execPath, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | null = null;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (timer === null && out.includes('ready') && killAfterMs !== null) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    // 'close', not 'exit': the process can be gone before the pipe's last bytes are read, and a lost `saved N` line
    // would make a version the writer finished look like one it never reported.
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (signal !== 'SIGKILL') return reject(new Error(`writer exited by itself (code ${code}): ${err}`));
      const saved = [...out.matchAll(/^saved (\d+)$/gm)].map((m) => Number(m[1]));
      const ready = /^ready (\d+)$/m.exec(out);
      resolve({ saved: saved.length ? Math.max(...saved) : 0, ready: ready ? Number(ready[1]) : null });
    });
    if (killAfterMs === null) setTimeout(() => child.kill('SIGKILL'), 1500);
  });
}

let root: string;
let bundled: string | null = null;
beforeAll(async () => {
  root = await tempRoot('waystation-crash-');
  // A pre-bundled writer starts in tens of milliseconds instead of a second under the tsx loader.
  try {
    const { build } = await import('esbuild');
    bundled = path.join(root, '.crash-writer.mjs');
    await build({
      entryPoints: [writer],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: bundled,
      logLevel: 'silent',
    });
  } catch {
    bundled = null;
  }
});
afterAll(async () => {
  await cleanup(root);
});

describe('a writer killed at random moments', () => {
  it(`leaves a consistent, resumable store after each of ${KILLS} SIGKILLs`, async () => {
    let lastSaved = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      // Mostly short runs, so the kill lands at every phase of a save (including during start-up).
      const run = await runAndKill(root, Math.floor(Math.random() * (kill % 5 === 0 ? 200 : 40)));
      if (run.ready !== null) expect(run.ready).toBeGreaterThanOrEqual(lastSaved);
      // `ready N` says version N is on disk as surely as `saved N` does: the first run's version 1 is made before it.
      lastSaved = Math.max(lastSaved, run.saved, run.ready ?? 0);

      const names = (await fs.readdir(path.join(root, 'crash', 'versions')).catch(() => [] as string[])) // Temp files of a killed save start with a dot; the history index is a cache of the writer's, not a version.
        .filter((n) => !n.startsWith('.') && n !== HISTORY_INDEX_FILE);
      const numbers = names.map((n) => Number(n.slice(0, 8))).sort((a, b) => a - b);
      expect(numbers).toEqual(numbers.map((_, i) => i + 1));
      for (const n of names) await readVersionFileStrict(path.join(root, 'crash', 'versions', n));

      if (numbers.length === 0) continue;
      const store = openStore(root);
      const entry = await store.getTask('crash');
      expect(entry?.problems).toEqual([]);
      const latest = entry!.checkpoint!.version;
      // Either the last version the writer reported, or the one it was writing when killed, if that one is complete.
      expect([lastSaved, lastSaved + 1]).toContain(latest);
      expect(latest).toBe(numbers[numbers.length - 1]);
      const history = await store.readHistory('crash');
      expect(history.map((m) => m.content)).toEqual(Array.from({ length: latest - 1 }, (_, i) => `m${i + 2}`));
      const v = await store.readVersion('crash', latest);
      if (latest > 1) expect(await store.readBlob('crash', v.plan[latest % 200].result_ref!)).toMatchObject({ version: latest });
      lastSaved = latest;
    }
    // And the store carries on: an unhurried writer keeps adding versions after all that.
    const final = await runAndKill(root, null);
    expect(final.saved).toBeGreaterThan(lastSaved + 1);
    const history = await openStore(root).history('crash');
    expect(history.map((h) => h.version)).toEqual(Array.from({ length: history.length }, (_, i) => i + 1));
  }, 180_000);
});

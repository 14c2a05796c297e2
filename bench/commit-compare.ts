/**
 * Is this tree's store slower than an earlier commit's? The same workload
 * (bench/lib/store-workload.ts: saves with and without the lease, reading the
 * latest version from a fresh store and from one kept open, listing a
 * directory of one-version tasks and one of tasks saved under the lease, as the
 * runtime writes them) runs against the directory store of both trees, in child
 * processes that alternate (base, this, base, this…),
 * on the same machine in the same run, and the ratios are printed. Each
 * child first makes saves it does not report (the save path compiled by the
 * JIT), after a `sync` that flushes what the child before it removed.
 *
 * The base is checked out with `git archive` into a temporary folder that
 * shares this repository's node_modules; nothing in the repository changes.
 *
 * Run: npm run bench:commit -- [--base REF] [--rounds 3] [--steps 200] [--tasks 2000]
 * (default base: HEAD~1, the previous commit).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchOptions, wholeNumber } from './lib/bench-args.js';
import { formatTable } from './lib/table.js';
import type { StoreWorkloadResult } from './lib/store-workload.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const METRICS: { key: keyof StoreWorkloadResult; label: string }[] = [
  { key: 'saveMs', label: 'save, no lease (ms, median)' },
  { key: 'leasedSaveMs', label: 'save under the lease (ms, median)' },
  { key: 'getTaskMs', label: 'latest version of the task (ms, median)' },
  { key: 'getTaskAgainMs', label: 'the same, from a store that opened it before (ms, median)' },
  { key: 'listMs', label: 'list the directory (ms, median)' },
  { key: 'listLeasedMs', label: 'list a directory of tasks saved under the lease (ms, median)' },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The tree of `ref`, extracted beside the repository's node_modules. */
async function checkout(ref: string): Promise<{ dir: string; commit: string }> {
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: repo, encoding: 'utf8' }).trim();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `ws-base-${commit}-`));
  const archive = spawnSync('git', ['archive', '--format=tar', ref], { cwd: repo, maxBuffer: 1024 * 1024 * 1024 });
  if (archive.status !== 0) throw new Error(`git archive ${ref} failed: ${archive.stderr.toString()}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`extracting ${ref} failed: ${untar.stderr.toString()}`);
  await fs.symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return { dir, commit };
}

function runWorkload(tree: string, steps: number, tasks: number): StoreWorkloadResult {
  // The run before removed thousands of files: their write-back would otherwise land on this run's first fsyncs.
  spawnSync('sync');
  const r = spawnSync(
    process.execPath,
    [
      path.join(repo, 'bin/waystation-tsx.mjs'),
      path.join(repo, 'bench/lib/store-workload.ts'),
      '--tree',
      tree,
      '--steps',
      String(steps),
      '--tasks',
      String(tasks),
    ],
    { cwd: repo, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  );
  if (r.status !== 0) throw new Error(`the workload failed on ${tree}:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as StoreWorkloadResult;
}

const values = benchOptions(import.meta.url, {
  base: { type: 'string', default: 'HEAD~1' },
  rounds: { type: 'string' },
  steps: { type: 'string' },
  tasks: { type: 'string' },
});
const rounds = wholeNumber('rounds', values.rounds, 3);
const steps = wholeNumber('steps', values.steps, 200, 2);
const tasks = wholeNumber('tasks', values.tasks, 2000);
const base = await checkout(values.base!);
const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repo, encoding: 'utf8' }).trim() !== '';
try {
  const runs: Record<'base' | 'this', StoreWorkloadResult[]> = { base: [], this: [] };
  for (let i = 0; i < rounds; i++) {
    // Alternated, so a change in the machine's load falls on both sides.
    runs.base.push(runWorkload(base.dir, steps, tasks));
    runs.this.push(runWorkload(repo, steps, tasks));
  }
  const rows = METRICS.map(({ key, label }) => {
    const b = median(runs.base.map((r) => r[key]));
    const t = median(runs.this.map((r) => r[key]));
    return [label, b.toFixed(2), t.toFixed(2), `${(t / b).toFixed(2)}x`];
  });
  console.log(
    `Store workload: ${steps} saves of a ${steps}-step task, a ${tasks}-task listing, one of ${Math.max(1, Math.floor(tasks / 4))} tasks saved under the lease; medians of ${rounds} alternated runs; load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  console.log(
    formatTable(
      [
        { header: 'measure' },
        { header: `base ${base.commit}`, align: 'right' },
        { header: `this ${head}${dirty ? '+' : ''}`, align: 'right' },
        { header: 'this / base', align: 'right' },
      ],
      rows,
    ),
  );
} finally {
  await fs.rm(base.dir, { recursive: true, force: true });
}

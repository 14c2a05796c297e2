import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkTargets, formatComparison, runComparison } from '../../bench/lib/compare/comparison.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-compare-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the LangGraph comparison, end to end at a tiny N', () => {
  it('runs every side on the same workload and reports consistent figures', async () => {
    const warmUps: string[] = [];
    const result = await runComparison({
      steps: [5],
      seed: 11,
      workDir: dir,
      fullLangGraphUpTo: 1000,
      readRuns: 2,
      warmUpSteps: 3,
      log: (l) => (l.startsWith('warming up') ? warmUps.push(l) : undefined),
    });
    const [run] = result.runs;
    expect(run.steps).toBe(5);
    expect(run.consistency).toEqual({ ok: true, problems: [] });

    for (const side of [run.waystation, run.sqlite, run.memory]) {
      expect(side.saves.allMs).toHaveLength(5);
      expect(side.saves.allMs!.every((ms) => ms > 0)).toBe(true);
      expect(side.reads.latest.messages).toBe(6);
      expect(side.reads.latest.ms).toHaveLength(2);
    }
    // The same last message came back from every side.
    expect(new Set([run.waystation, run.sqlite, run.memory].map((s) => s.reads.middle.lastMessage)).size).toBe(1);

    // Storage is measured on disk for both durable sides; the task folder holds versions and blobs.
    expect(run.waystation.storage.usage!.files).toBeGreaterThan(5);
    expect(run.sqlite.storage.bytes).toBe(run.sqlite.sqlite!.dbBytes + run.sqlite.sqlite!.walBytes + run.sqlite.sqlite!.shmBytes);

    // Ratios are LangGraph SQLite ÷ Waystation, computed from the figures themselves.
    for (const figure of run.figures) {
      if (figure.ratio !== null) expect(figure.ratio).toBeCloseTo(figure.sqlite! / figure.waystation!, 9);
    }
    const storage = run.figures.find((f) => f.unit === 'bytes')!;
    expect(storage).toMatchObject({ waystation: run.waystation.storage.bytes, sqlite: run.sqlite.storage.bytes });

    // The warm-up ran once, before the measured run, and left nothing behind either.
    expect(warmUps).toEqual(['warming up: a throwaway 3-step task on each side']);
    // No temporary store is left behind, and the report names the machine, the warm-up and durability.
    expect(await fs.readdir(dir)).toEqual([]);
    const report = formatComparison(result, 'npm run bench:compare -- --steps 5');
    expect(report).toContain('synchronous=2 (FULL)');
    expect(report).toContain(`nproc ${result.machine.nproc}`);
    expect(report).toContain('#### 5 steps');
    expect(report).toContain('each side saves a throwaway 3-step task');
    // The disk's own cost of a step under each design was measured in the same run and is in the report.
    for (const ms of Object.values(result.diskFloor.ms)) {
      expect(ms).toHaveLength(result.diskFloor.iterations);
      expect(ms.every((m) => m > 0)).toBe(true);
    }
    for (const protocol of ['commit', 'save', 'append', 'append-rotated', 'sqlite'])
      expect(report).toMatch(new RegExp(`\\| ${protocol} +\\| .* ms \\|`));
  });

  it('checks targets only at the task lengths they are stated for', async () => {
    const result = await runComparison({ steps: [5], seed: 11, workDir: dir, fullLangGraphUpTo: 1000, readRuns: 1, warmUpSteps: 0 });
    expect(checkTargets(result.runs)).toEqual([]);
    const as100 = result.runs.map((r) => ({ ...r, steps: 100 }));
    const [check] = checkTargets(as100);
    const figure = as100[0].figures.find((f) => f.name === 'save p50, all steps')!;
    expect(check).toMatchObject({ steps: 100, ratio: figure.ratio, met: figure.ratio! >= 1 });
  });
});

/**
 * Each recovery mode, approve, reject and edit, end to end through the CLI
 * (worker processes and all) on a real temporary directory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { acquireLease } from '../../../electron/store/file-lease.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { SIMULATED_FAILURE } from '../../../electron/agents/checkpoint-demo.js';
import { captureCli as cli } from '../cli/capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';

let dir: string;

// A quick model and a quick auto backoff.
useOfflineWorkers({ WAYSTATION_OFFLINE_LATENCY_MS: '5', WAYSTATION_AUTO_BACKOFF_MS: '20' });
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-cli-'));
  delete process.env.SKIP_FAILURE;
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const latest = async (id: string) => (await openStore(dir).getTask(id))!.checkpoint!;
const versionCount = async (id: string) => (await openStore(dir).history(id)).length;

describe('manual mode', () => {
  it('fails at step 3, says what to do, and a second run resumes at step 3', async () => {
    const first = await cli('run', dir, 'checkpoint-demo', '--task', 'demo');
    expect(first.code).toBe(RunExit.failed);
    expect(first.out).toContain(SIMULATED_FAILURE);
    expect(first.out).toContain(`waystation resume ${dir} demo`);

    process.env.SKIP_FAILURE = '1';
    const second = await cli('run', dir, 'checkpoint-demo', '--task', 'demo');
    expect(second.code).toBe(RunExit.done);
    expect(second.out).toContain('analyse (analyse the requirement): already done');
    const cp = await latest('demo');
    expect(cp.status).toBe('done');
    expect(cp.plan.map((s) => s.attempts)).toEqual([1, 1, 2, 1]);
  });
});

describe('auto mode', () => {
  it('resumes by itself with backoff, then gives up after the maximum attempts', async () => {
    const r = await cli('run', dir, 'checkpoint-demo', '--task', 'auto', '--mode', 'auto', '--max-attempts', '2');
    expect(r.code).toBe(RunExit.failed);
    expect(r.out.match(/auto mode: resuming auto/g)).toHaveLength(2);
    expect(r.out).toContain('automatic recovery gave up after 2 attempt(s)');
    const cp = await latest('auto');
    expect(cp.recovery.auto_attempts).toBe(2);
    expect(cp.plan[2].attempts).toBe(3);
    expect(cp.plan[0].attempts).toBe(1);
  });

  it('resumes an interrupted task at start-up once verification passes', async () => {
    process.env.SKIP_FAILURE = '1';
    process.env.WAYSTATION_OFFLINE_LATENCY_MS = '150';
    try {
      const first = new Runner({ root: dir });
      const { child, done } = first.spawnWorker({
        kind: 'start',
        root: dir,
        taskId: 'crashy',
        agentRef: { name: 'checkpoint-demo' },
        options: {},
        mode: 'auto',
      });
      // Killed once the second step is under way.
      let lines = 0;
      first.onEvent((e) => {
        if (e.type === 'line' && ++lines === 3) child.kill('SIGKILL');
      });
      const crashed = await done;
      expect(crashed.crashed).toBe(true);
      expect((await latest('crashy')).status).toBe('running');

      const restarted = new Runner({ root: dir });
      const outcomes = await restarted.recoverInterrupted();
      expect(outcomes.map((o) => o.status)).toEqual(['done']);
      const cp = await latest('crashy');
      expect(cp.plan[0].attempts).toBe(1);
      expect(cp.recovery.auto_attempts).toBe(0);
    } finally {
      process.env.WAYSTATION_OFFLINE_LATENCY_MS = '5';
    }
  });

  it('leaves a fork of a version mid-run to a person: it carries no stop, and no host resumes it before a run of its own', async () => {
    process.env.SKIP_FAILURE = '1';
    expect((await cli('run', dir, 'checkpoint-demo', '--task', 'src', '--mode', 'auto')).code).toBe(RunExit.done);
    const store = openStore(dir);
    const versions = await store.readVersions(
      'src',
      (await store.history('src')).map((v) => v.version),
    );
    const midRun = versions.find((v) => v.status === 'running')!.version;
    expect((await cli('fork', dir, 'src', String(midRun), '--task', 'held')).code).toBe(0);
    expect((await latest('held')).recovery).toMatchObject({ mode: 'auto', stopped: null });
    // Neither from a listing nor named as a candidate.
    expect(await new Runner({ root: dir }).recoverInterrupted()).toEqual([]);
    expect(await new Runner({ root: dir }).recoverInterrupted(['held'])).toEqual([]);
    expect(await versionCount('held')).toBe(1);
    expect((await cli('resume', dir, 'held')).code).toBe(RunExit.done);
  });

  it('falls back to waiting for a human when verification fails', async () => {
    process.env.SKIP_FAILURE = '';
    await cli('run', dir, 'md-summarizer', '--task', 'md', '--mode', 'auto', '--max-attempts', '2', '--input', await markdownFolder());
    // Simulate an interrupted run whose artifact was then changed by hand.
    const cp = await latest('md');
    expect(cp.status).toBe('done');
    const store = openStore(dir);
    await store.save('md', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), status: 'running' } });
    await fs.appendFile(path.join(dir, cp.artifacts[0].path), 'edited by hand');
    const outcomes = await new Runner({ root: dir }).recoverInterrupted();
    expect(outcomes.map((o) => o.status)).toEqual(['waiting_human']);
    expect((await latest('md')).resume_hint).toMatch(/artifacts changed/);
  });
});

describe('confirm mode', () => {
  it('records a resume plan as a pending approval; approve resumes it', async () => {
    const first = await cli('run', dir, 'checkpoint-demo', '--task', 'conf', '--mode', 'confirm');
    expect(first.code).toBe(RunExit.waiting_approval);
    expect(first.out).toContain('rerun from: check-errors');
    expect(first.out).toContain(`waystation approve ${dir} conf`);
    expect((await latest('conf')).recovery.pending_approval?.plan.rerun_step).toBe('check-errors');

    process.env.SKIP_FAILURE = '1';
    const approved = await cli('approve', dir, 'conf', '--by', 'alice');
    expect(approved.code).toBe(RunExit.done);
    const cp = await latest('conf');
    expect(cp.recovery.decisions[0]).toMatchObject({ decision: 'approved', by: 'alice' });
  });

  it('reject halts the task; resuming a halted task is refused', async () => {
    await cli('run', dir, 'checkpoint-demo', '--task', 'rej', '--mode', 'confirm');
    const rejected = await cli('reject', dir, 'rej', '--reason', 'not this way', '--by', 'bob');
    expect(rejected.code).toBe(0);
    const cp = await latest('rej');
    expect(cp.status).toBe('halted');
    expect(cp.recovery.decisions[0]).toMatchObject({ decision: 'rejected', by: 'bob', reason: 'not this way' });
    const v = await versionCount('rej');
    const resumed = await cli('resume', dir, 'rej');
    expect(resumed.code).toBe(RunExit.halted);
    expect(resumed.err).toMatch(/halted.*not this way/);
    expect(await versionCount('rej')).toBe(v);
    // An edit would put the task back in motion: the rejection stands.
    const edited = await cli('edit', dir, 'rej', 'check-errors', '--value', '"fine"');
    expect(edited.code).toBe(RunExit.halted);
    expect(edited.err).toMatch(/rej is halted.*not this way.*cannot be edited.*Nothing was written/);
    expect(await versionCount('rej')).toBe(v);
    expect((await latest('rej')).status).toBe('halted');
  });
});

describe('edit', () => {
  it("replaces a failed step's result and resume continues with the next step", async () => {
    await cli('run', dir, 'checkpoint-demo', '--task', 'ed');
    const edited = await cli('edit', dir, 'ed', 'check-errors', '--value', '"no bugs found (checked by hand)"', '--by', 'carol');
    expect(edited.code).toBe(0);
    expect(edited.out).toContain(`waystation resume ${dir} ed`);
    const resumed = await cli('resume', dir, 'ed');
    expect(resumed.code).toBe(RunExit.done);
    const cp = await latest('ed');
    expect(cp.plan.map((s) => s.attempts)).toEqual([1, 1, 1, 1]);
    const history = await openStore(dir).history('ed');
    expect(history.some((h) => h.source.kind === 'human-edit' && h.source.edit?.after === 'no bugs found (checked by hand)')).toBe(true);
  });

  it("keeps event ids unique and increasing when one runner edits around a worker's resume", async () => {
    await cli('run', dir, 'checkpoint-demo', '--task', 'ids');
    const runner = new Runner({ root: dir });
    expect((await runner.edit('ids', 'check-errors', 'checked by hand')).exitCode).toBe(0);
    expect((await runner.resume('ids')).status).toBe('done');
    expect((await runner.edit('ids', 'generate-tests', 'tests by hand')).exitCode).toBe(0);
    const ids = (await openStore(dir).readEvents('ids')).map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
  });

  it('rejects bad input with a clear error, a non-zero exit and no new version', async () => {
    await cli('run', dir, 'checkpoint-demo', '--task', 'bad');
    const v = await versionCount('bad');
    const unknown = await cli('edit', dir, 'bad', 'no-such-step', '--value', '"x"');
    expect(unknown.code).toBe(RunExit.usage);
    expect(unknown.err).toMatch(/no step "no-such-step".*analyse, write-code, check-errors, generate-tests/);
    const invalid = await cli('edit', dir, 'bad', 'check-errors', '--value', '42');
    expect(invalid.code).toBe(RunExit.usage);
    expect(invalid.err).toMatch(/expected string, got integer/);
    const notJson = await cli('edit', dir, 'bad', 'check-errors', '--value', 'plain text');
    expect(notJson.code).toBe(RunExit.usage);
    expect(notJson.err).toMatch(/not JSON/);
    const noApproval = await cli('approve', dir, 'bad');
    expect(noApproval.code).toBe(RunExit.usage);
    expect(noApproval.err).toMatch(/no pending approval/);
    const noTask = await cli('resume', dir, 'ghost');
    expect(noTask.code).toBe(RunExit.usage);
    expect(await versionCount('bad')).toBe(v);
  });
});

describe('refusals through the CLI', () => {
  /** Every file under the task folder, with its bytes. */
  async function snapshot(taskDir: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const walk = async (d: string): Promise<void> => {
      for (const e of await fs.readdir(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) await walk(p);
        else out.set(path.relative(taskDir, p), (await fs.readFile(p)).toString('base64'));
      }
    };
    await walk(taskDir);
    return out;
  }

  it('a task another runner holds: exit 6, and nothing is written', async () => {
    await cli('run', dir, 'checkpoint-demo', '--task', 'held');
    const lease = await acquireLease(path.join(dir, 'held'), 'held', { owner: 'other runner', heartbeatMs: 0 });
    try {
      const v = await versionCount('held');
      const resumed = await cli('resume', dir, 'held');
      expect(resumed.code).toBe(RunExit.busy);
      expect(resumed.err).toMatch(/another runner.*nothing was written/);
      const edited = await cli('edit', dir, 'held', 'check-errors', '--value', '"fine"');
      expect(edited.code).toBe(RunExit.busy);
      expect(await versionCount('held')).toBe(v);
      expect((await latest('held')).status).toBe('failed');
    } finally {
      await lease.release();
    }
  });

  it('a task written by a newer schema: exit 2, and its files are left byte for byte', async () => {
    await cli('run', dir, 'checkpoint-demo', '--task', 'fut');
    const cp = await latest('fut');
    const taskDir = path.join(dir, 'fut');
    const names = await fs.readdir(path.join(taskDir, 'versions'));
    const width = names[0].replace('.json', '').length;
    const next = { ...cp, schema_version: 99, version: cp.version + 1 };
    await fs.writeFile(
      path.join(taskDir, 'versions', `${String(next.version).padStart(width, '0')}.json`),
      JSON.stringify({ format: 'waystation-version', version: next.version, kind: 'full', checkpoint: next }),
    );
    await fs.writeFile(path.join(taskDir, 'checkpoint.json'), JSON.stringify(next));
    const before = await snapshot(taskDir);
    for (const args of [
      ['resume', dir, 'fut'],
      ['edit', dir, 'fut', 'check-errors', '--value', '"fine"'],
      ['approve', dir, 'fut'],
    ]) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(RunExit.usage);
      expect(r.err).toMatch(/schema/i);
    }
    expect(await snapshot(taskDir)).toEqual(before);
  });
});

describe('tail', () => {
  it('prints events after an id, like Last-Event-ID', async () => {
    await cli('run', dir, 'checkpoint-demo', '--task', 'tl');
    const all = await cli('tail', dir, 'tl', '--json');
    const ids = all.out
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: number }).id);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    const rest = await cli('tail', dir, 'tl', '--from', '4', '--json');
    expect((JSON.parse(rest.out.split('\n')[0]) as { id: number }).id).toBe(5);
  });
});

async function markdownFolder(): Promise<string> {
  const input = path.join(dir, '..', `${path.basename(dir)}-input`);
  await fs.mkdir(input, { recursive: true });
  await fs.writeFile(path.join(input, 'a.md'), '# Alpha\n\nAlpha is first. It leads.\n');
  await fs.writeFile(path.join(input, 'b.md'), '# Beta\n\nBeta follows alpha.\n');
  return input;
}

function withoutVersion<T extends { version: number }>(cp: T): Omit<T, 'version'> {
  const { version: _v, ...rest } = cp;
  return rest;
}

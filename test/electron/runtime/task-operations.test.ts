/**
 * The runtime's guarantees, driven in-process against the real directory
 * store on a temporary folder (the worker process adds only the process
 * boundary, exercised by the crash and CLI tests).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { verifyTask } from '../../../electron/verify/verify-task.js';
import { defineAgent, type ProbeResult } from '../../../electron/runtime/define-agent.js';
import { acquireLease } from '../../../electron/store/file-lease.js';
import {
  approveTask,
  editStepResult,
  OperationError,
  rejectTask,
  resumeTask,
  startTask,
  type OperationEnv,
} from '../../../electron/runtime/task-operations.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { OpenAiProvider } from '../../../electron/llm/openai-provider.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../fakes/fake-openai-server.js';

let root: string;
let store: CheckpointStore;
let service: FakePublishService;
let env: OperationEnv;

beforeAll(async () => {
  service = await startFakePublishService();
});
afterAll(async () => {
  await service.close();
});
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-ops-'));
  store = openStore(root);
  env = { store, root, llm: new OfflineProvider(0), actor: 'tester' };
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const latest = async (id: string) => (await store.getTask(id))!.checkpoint!;
const versions = async (id: string) => (await store.history(id)).length;

async function expectConsistent(id: string) {
  const report = await verifyTask(root, await latest(id));
  expect(report.invariant_problems).toEqual([]);
}

/** Three steps; the middle one fails while `failing.on` is set. Counts how often each body runs. */
function countingAgent(failing: { on: boolean }, runs: Record<string, number>) {
  return defineAgent({
    name: 'counting',
    description: 'three steps',
    options: z.object({}),
    goal: () => 'count',
    plan: () => [
      { id: 'one', name: 'one', output_schema: z.object({ n: z.number() }) },
      { id: 'two', name: 'two', output_schema: z.object({ n: z.number() }) },
      { id: 'three', name: 'three' },
    ],
    async run(ctx) {
      const one = await ctx.step('one', () => {
        runs.one = (runs.one ?? 0) + 1;
        return { n: 1 };
      });
      const two = await ctx.step('two', () => {
        runs.two = (runs.two ?? 0) + 1;
        if (failing.on) throw new Error('two is broken');
        return { n: one.n + 1 };
      });
      await ctx.step('three', () => {
        runs.three = (runs.three ?? 0) + 1;
        return { total: two.n + 1 };
      });
    },
  });
}

describe('steps', () => {
  it('never runs a done step again on resume and returns its stored result', async () => {
    const failing = { on: true };
    const runs: Record<string, number> = {};
    const agent = countingAgent(failing, runs);
    const first = await startTask(env, agent, { taskId: 't1' });
    expect(first.status).toBe('failed');
    const cp = await latest('t1');
    expect(cp.plan.map((s) => s.status)).toEqual(['done', 'failed', 'pending']);
    expect(cp.plan[1].error?.message).toBe('two is broken');
    await expectConsistent('t1');

    failing.on = false;
    const second = await resumeTask(env, agent, 't1');
    expect(second.status).toBe('done');
    expect(runs).toEqual({ one: 1, two: 2, three: 1 });
    const done = await latest('t1');
    expect(await store.readBlob('t1', done.plan[2].result_ref!)).toEqual({ total: 3 });
    // The fifth boundary: the failure, the fix and its verification are recorded.
    expect(done.errors).toHaveLength(1);
    expect(done.errors[0]).toMatchObject({ step_id: 'two', what: 'two is broken', verification: 'step two completed' });
    await expectConsistent('t1');
  });

  it('appends events with increasing ids that a subscriber can resume from', async () => {
    await startTask(env, countingAgent({ on: false }, {}), { taskId: 'ev' });
    const events = await store.readEvents('ev');
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => `${e.type}${e.step_id ? `:${e.step_id}` : ''}`);
    for (const id of ['one', 'two', 'three']) {
      expect(types.indexOf(`step-start:${id}`)).toBeLessThan(types.indexOf(`step-finish:${id}`));
    }
    expect(types.filter((t) => t === 'version').length).toBe(await versions('ev'));
    const after = await store.readEvents('ev', 5);
    expect(after[0].id).toBe(6);
  });

  it('records model, tokens, cost and per-step latency', async () => {
    const agent = defineAgent({
      name: 'talker',
      description: '',
      options: z.object({}),
      goal: () => 'talk',
      plan: () => [{ id: 'ask', name: 'ask' }],
      async run(ctx) {
        await ctx.step('ask', async () => (await ctx.llm.complete([{ role: 'user', content: 'hello' }])).text);
      },
    });
    await startTask(env, agent, { taskId: 'meta' });
    const cp = await latest('meta');
    expect(cp.run.model).toBe('waystation-offline');
    expect(cp.run.tokens_in).toBeGreaterThan(0);
    expect(cp.run.tokens_out).toBeGreaterThan(0);
    expect(cp.run.llm_calls).toHaveLength(1);
    expect(cp.plan[0].elapsed_ms).toBeGreaterThanOrEqual(0);
    expect(cp.plan[0].tokens_out).toBe(cp.run.tokens_out);
    expect(cp.history.count).toBe(2);
  });
});

describe('side effects', () => {
  function publisher(opts: { agentProbe: boolean; callProbe: boolean }) {
    const probe = async (key: string): Promise<ProbeResult> => {
      const res = await fetch(`${service.url}?key=${encodeURIComponent(key)}`);
      return res.status === 404 ? { happened: false } : { happened: true, outcome: await res.json() };
    };
    return defineAgent({
      name: 'publisher',
      description: '',
      options: z.object({}),
      goal: () => 'publish once',
      plan: () => [{ id: 'publish', name: 'publish' }],
      probes: opts.agentProbe ? { http: (e) => probe(e.idempotency_key) } : undefined,
      async run(ctx) {
        await ctx.step('publish', () =>
          ctx.effect({
            type: 'http',
            key: `${ctx.taskId}:publish`,
            perform: async (key) => {
              const res = await fetch(service.url, { method: 'POST', headers: { 'idempotency-key': key }, body: '{}' });
              return res.json();
            },
            probe: opts.callProbe ? (e) => probe(e.idempotency_key) : undefined,
          }),
        );
      },
    });
  }

  it('settles an effect whose reply was lost by probing, and never performs it twice', async () => {
    const agent = publisher({ agentProbe: true, callProbe: true });
    service.failNext('drop-after-apply');
    const first = await startTask(env, agent, { taskId: 'fx1' });
    expect(first.status).toBe('failed');
    expect((await latest('fx1')).side_effects[0].status).toBe('uncertain');

    const second = await resumeTask(env, agent, 'fx1');
    expect(second.status).toBe('done');
    const effect = (await latest('fx1')).side_effects[0];
    expect(effect).toMatchObject({ status: 'done', reconciliation: 'probed-done' });
    expect(service.applied.get('fx1:publish')).toBe(1);
    expect(service.duplicates.has('fx1:publish')).toBe(false);
    await expectConsistent('fx1');
  });

  it('retries with the same key when the probe finds nothing', async () => {
    const agent = publisher({ agentProbe: false, callProbe: true });
    service.failNext('drop-before-apply');
    expect((await startTask(env, agent, { taskId: 'fx2' })).status).toBe('failed');
    expect((await resumeTask(env, agent, 'fx2')).status).toBe('done');
    const effect = (await latest('fx2')).side_effects[0];
    expect(effect).toMatchObject({ status: 'done', reconciliation: 'probed-absent-retried', attempts: 2 });
    expect(service.applied.get('fx2:publish')).toBe(1);
  });

  it("stops for a human when an uncertain effect has no probe, and takes the human's word", async () => {
    const agent = publisher({ agentProbe: false, callProbe: false });
    service.failNext('drop-after-apply');
    await startTask(env, agent, { taskId: 'fx3' });
    const stopped = await resumeTask(env, agent, 'fx3');
    expect(stopped.status).toBe('waiting_human');
    expect(stopped.message).toMatch(/no probe/);
    const resumed = await resumeTask(env, agent, 'fx3', { settle: { 'fx3:publish': true } });
    expect(resumed.status).toBe('done');
    expect((await latest('fx3')).side_effects[0].reconciliation).toBe('settled-by-human');
    expect(service.applied.get('fx3:publish')).toBe(1);
    expect(service.duplicates.has('fx3:publish')).toBe(false);
  });
});

describe('artifacts and drift', () => {
  function writer(failing: { on: boolean }) {
    return defineAgent({
      name: 'writer',
      description: '',
      options: z.object({}),
      goal: () => 'write',
      plan: () => [
        { id: 'write', name: 'write' },
        { id: 'after', name: 'after' },
      ],
      async run(ctx) {
        await ctx.step('write', async () => (await ctx.writeArtifact('out/a.txt', 'content A')).sha256);
        await ctx.step('after', () => {
          if (failing.on) throw new Error('later failure');
          return 'ok';
        });
      },
    });
  }

  it('records sha256 and size, and stops with a reason when an artifact drifted', async () => {
    const failing = { on: true };
    const agent = writer(failing);
    await startTask(env, agent, { taskId: 'dr' });
    const artifact = (await latest('dr')).artifacts[0];
    expect(artifact).toMatchObject({ path: 'out/a.txt', size: 9, step_id: 'write' });
    await fs.writeFile(path.join(root, 'out/a.txt'), 'tampered');
    failing.on = false;
    const stopped = await resumeTask(env, agent, 'dr');
    expect(stopped.status).toBe('waiting_human');
    expect(stopped.message).toMatch(/out\/a\.txt: modified/);
    expect((await latest('dr')).plan[1].status).toBe('failed');

    const rerun = await resumeTask(env, agent, 'dr', { rerunDrifted: true });
    expect(rerun.status).toBe('done');
    expect(await fs.readFile(path.join(root, 'out/a.txt'), 'utf8')).toBe('content A');
    expect((await verifyTask(root, await latest('dr'))).ok).toBe(true);
  });

  it('regenerates a drifted artifact of a done task only when asked to, and leaves a done task that did not drift as it is', async () => {
    const agent = writer({ on: false });
    expect((await startTask(env, agent, { taskId: 'dd' })).status).toBe('done');
    const untouched = await versions('dd');
    const nothing = await resumeTask(env, agent, 'dd', { rerunDrifted: true });
    expect(nothing).toMatchObject({ status: 'done', message: 'task dd is done and none of its artifacts drifted; nothing to rerun' });
    expect(await versions('dd')).toBe(untouched);

    await fs.writeFile(path.join(root, 'out/a.txt'), 'tampered');
    expect((await resumeTask(env, agent, 'dd')).message).toBe('task dd is already done; nothing to resume');
    expect(await versions('dd')).toBe(untouched);
    const rerun = await resumeTask(env, agent, 'dd', { rerunDrifted: true });
    expect(rerun.status).toBe('done');
    expect(await fs.readFile(path.join(root, 'out/a.txt'), 'utf8')).toBe('content A');
    // While it reruns, the task is running in the phase its steps ran in (this agent names none), not done.
    expect(await store.readVersion('dd', untouched + 1)).toMatchObject({ status: 'running', phase: 'start' });
    const cp = await latest('dd');
    expect((await verifyTask(root, cp)).ok).toBe(true);
    // The step that made the file ran again, and the steps after it, as a rerun from it does.
    expect(cp.plan.map((s) => s.attempts)).toEqual([2, 2]);
  });

  it('refuses to rerun a done task whose drifted file no step made, and writes nothing', async () => {
    const agent = defineAgent({
      name: 'loose-writer',
      description: 'records a file no step made',
      options: z.object({}),
      goal: () => 'record',
      plan: () => [{ id: 'only', name: 'only' }],
      async run(ctx) {
        await ctx.writeArtifact('loose.txt', 'loose');
        await ctx.step('only', () => 'ok');
      },
    });
    expect((await startTask(env, agent, { taskId: 'dl' })).status).toBe('done');
    await fs.writeFile(path.join(root, 'loose.txt'), 'tampered');
    const before = await versions('dl');
    await expect(resumeTask(env, agent, 'dl', { rerunDrifted: true })).rejects.toThrow(
      /task dl is done, and --rerun-drifted cannot rerun it: drift on an artifact no step produced \(loose\.txt\)/,
    );
    expect(await versions('dl')).toBe(before);
  });
});

describe('confirm mode', () => {
  it('prepares a resume plan after a failure, and approve runs exactly that plan', async () => {
    const failing = { on: true };
    const runs: Record<string, number> = {};
    const agent = countingAgent(failing, runs);
    const first = await startTask(env, agent, { taskId: 'c1', mode: 'confirm' });
    expect(first.status).toBe('waiting_approval');
    const cp = await latest('c1');
    expect(cp.recovery.pending_approval?.plan.rerun_step).toBe('two');
    await expectConsistent('c1');

    // Resuming without approval changes nothing.
    const v = await versions('c1');
    expect((await resumeTask(env, agent, 'c1')).status).toBe('waiting_approval');
    expect(await versions('c1')).toBe(v);

    failing.on = false;
    const approved = await approveTask(env, agent, 'c1', { actor: 'alice' });
    expect(approved.status).toBe('done');
    const done = await latest('c1');
    expect(done.recovery.decisions).toEqual([expect.objectContaining({ decision: 'approved', by: 'alice' })]);
    const sources = (await store.history('c1')).map((h) => h.source.kind);
    expect(sources).toContain('approval');
    expect(runs.one).toBe(1);
  });

  it('reject records who, when and why, and halts the task for good', async () => {
    const agent = countingAgent({ on: true }, {});
    await startTask(env, agent, { taskId: 'c2', mode: 'confirm' });
    const rejected = await rejectTask(env, 'c2', { reason: 'wrong approach', actor: 'bob' });
    expect(rejected.status).toBe('halted');
    const cp = await latest('c2');
    expect(cp.recovery.decisions.at(-1)).toMatchObject({ decision: 'rejected', by: 'bob', reason: 'wrong approach' });
    expect(cp.recovery.pending_approval).toBeNull();
    const v = await versions('c2');
    await expect(resumeTask(env, agent, 'c2')).rejects.toMatchObject({ code: 'halted' });
    expect(await versions('c2')).toBe(v);
  });

  it('refuses to approve or reject a task with no pending approval, writing nothing', async () => {
    const agent = countingAgent({ on: true }, {});
    await startTask(env, agent, { taskId: 'c3' });
    const v = await versions('c3');
    await expect(approveTask(env, agent, 'c3')).rejects.toMatchObject({ code: 'no-approval' });
    await expect(rejectTask(env, 'c3', { reason: 'x' })).rejects.toMatchObject({ code: 'no-approval' });
    expect(await versions('c3')).toBe(v);
  });
});

describe('human edits', () => {
  it('validates the value, records before and after, and resume continues with the edited result', async () => {
    const runs: Record<string, number> = {};
    const agent = countingAgent({ on: true }, runs);
    await startTask(env, agent, { taskId: 'e1' });
    const v = await versions('e1');

    await expect(editStepResult(env, 'e1', 'nope', { n: 5 })).rejects.toMatchObject({ code: 'unknown-step' });
    const invalid = await editStepResult(env, 'e1', 'two', { n: 'five' }).catch((e: OperationError) => e);
    expect(invalid).toMatchObject({ code: 'invalid' });
    expect((invalid as Error).message).toMatch(/\$\.n: expected number/);
    expect(await versions('e1')).toBe(v);

    const edited = await editStepResult(env, 'e1', 'two', { n: 40 }, { actor: 'carol' });
    expect(edited.status).toBe('waiting_human');
    const history = await store.history('e1');
    expect(history.at(-1)?.source).toMatchObject({
      kind: 'human-edit',
      actor: 'carol',
      edit: { step_id: 'two', before: null, after: { n: 40 } },
    });

    const resumed = await resumeTask(env, agent, 'e1');
    expect(resumed.status).toBe('done');
    const cp = await latest('e1');
    expect(await store.readBlob('e1', cp.plan[2].result_ref!)).toEqual({ total: 41 });
    expect(runs.two).toBe(1);
    expect(cp.errors[0]).toMatchObject({ step_id: 'two', fix: 'result replaced by a human edit (carol)' });
    await expectConsistent('e1');
  });
});

describe('human edits against a moved version', () => {
  it('refuses an edit opened on an older version, writing nothing, and accepts one on the latest', async () => {
    const agent = countingAgent({ on: true }, {});
    await startTask(env, agent, { taskId: 'e2' });
    const v = await versions('e2');
    const stale = await editStepResult(env, 'e2', 'two', { n: 40 }, { expectedVersion: v - 1 }).catch((e: OperationError) => e);
    expect(stale).toMatchObject({ code: 'moved' });
    expect((stale as Error).message).toMatch(new RegExp(`moved on to version ${v} since version ${v - 1}.*Nothing was written`));
    expect(await versions('e2')).toBe(v);
    const edited = await editStepResult(env, 'e2', 'two', { n: 40 }, { expectedVersion: v });
    expect(edited.version).toBe(v + 1);
  });
});

describe('refusals that write nothing', () => {
  it('refuses to resume a task another runner holds', async () => {
    const agent = countingAgent({ on: true }, {});
    await startTask(env, agent, { taskId: 'busy' });
    const v = await versions('busy');
    const lease = await acquireLease(path.join(root, 'busy'), 'busy', { owner: 'other', heartbeatMs: 0 });
    try {
      const err = await resumeTask(env, agent, 'busy').catch((e: OperationError) => e);
      expect(err).toMatchObject({ code: 'busy' });
      expect((err as Error).message).toMatch(/another runner.*nothing was written/);
    } finally {
      await lease.release();
    }
    expect(await versions('busy')).toBe(v);
  });

  it('refuses to resume a task written by a newer schema', async () => {
    const agent = countingAgent({ on: true }, {});
    await startTask(env, agent, { taskId: 'fut' });
    const cp = await latest('fut');
    const future = { ...cp, schema_version: 99, version: 2 };
    const dir = path.join(root, 'fut');
    const names = await fs.readdir(path.join(dir, 'versions'));
    const width = names[0].replace('.json', '').length;
    const file = path.join(dir, 'versions', `${String(cp.version + 1).padStart(width, '0')}.json`);
    await fs.writeFile(
      file,
      JSON.stringify({
        format: 'waystation-version',
        version: cp.version + 1,
        kind: 'full',
        checkpoint: { ...future, version: cp.version + 1 },
      }),
    );
    await fs.writeFile(path.join(dir, 'checkpoint.json'), JSON.stringify({ ...future, version: cp.version + 1 }));
    const before = (await fs.readdir(path.join(dir, 'versions'))).length;
    const err = await resumeTask(env, agent, 'fut').catch((e: OperationError) => e);
    expect(err).toBeInstanceOf(OperationError);
    expect((err as OperationError).code).toMatch(/future-schema|read-only/);
    expect((await fs.readdir(path.join(dir, 'versions'))).length).toBe(before);
  });

  it('refuses options that would store the API key', async () => {
    const agent = defineAgent({
      name: 'leaky',
      description: '',
      options: z.object({ token: z.string() }),
      goal: () => 'x',
      plan: () => [],
      async run() {},
    });
    await expect(
      startTask({ ...env, env: { OPENAI_API_KEY: 'sk-live-abcdefgh' } }, agent, { taskId: 'leak', options: { token: 'sk-live-abcdefgh' } }),
    ).rejects.toMatchObject({
      code: 'invalid',
    });
    expect(await store.getTask('leak')).toBeNull();
  });
});

describe('waiting for a human', () => {
  it("saves, stops, and returns the human's note once resumed", async () => {
    const agent = defineAgent({
      name: 'asker',
      description: '',
      options: z.object({}),
      goal: () => 'ask',
      plan: () => [{ id: 'ask', name: 'ask' }],
      async run(ctx) {
        await ctx.step('ask', async () => ({ note: await ctx.waitForHuman('check the draft') }));
      },
    });
    const first = await startTask(env, agent, { taskId: 'w1' });
    expect(first.status).toBe('waiting_human');
    expect((await latest('w1')).resume_hint).toMatch(/check the draft/);
    expect((await resumeTask(env, agent, 'w1', { note: 'looks fine' })).status).toBe('done');
    const cp = await latest('w1');
    expect(await store.readBlob('w1', cp.plan[0].result_ref!)).toEqual({ note: 'looks fine' });
  });
});

describe('an online model behind a flaky server', () => {
  let server: FakeOpenAiServer;
  beforeAll(async () => {
    server = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('records retries in the checkpoint and keeps the key out of every file', async () => {
    const key = 'sk-never-store-me-123456';
    const llm = new OpenAiProvider({
      apiKey: key,
      baseURL: server.baseURL,
      model: 'fake-model',
      timeoutMs: 2000,
      maxRetries: 3,
      backoffMs: 5,
      maxBackoffMs: 20,
    });
    server.script({ kind: 'status', status: 429 }, { kind: 'status', status: 502 }, { kind: 'ok', content: 'answer' });
    const agent = defineAgent({
      name: 'online',
      description: '',
      options: z.object({}),
      goal: () => 'x',
      plan: () => [{ id: 'ask', name: 'ask' }],
      async run(ctx) {
        await ctx.step('ask', async () => (await ctx.llm.complete([{ role: 'user', content: 'q' }])).text);
      },
    });
    const out = await startTask({ ...env, llm, env: { OPENAI_API_KEY: key } }, agent, { taskId: 'on' });
    expect(out.status).toBe('done');
    const call = (await latest('on')).run.llm_calls[0];
    expect(call.retries).toBe(2);
    expect(call.retry_reasons.map((r) => r.split(' (')[0])).toEqual(['429 rate limited', '502 server error']);
    const files: string[] = [];
    const walk = async (d: string): Promise<void> => {
      for (const e of await fs.readdir(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) await walk(p);
        else files.push(await fs.readFile(p, 'utf8'));
      }
    };
    await walk(root);
    expect(files.length).toBeGreaterThan(3);
    expect(files.some((f) => f.includes(key))).toBe(false);
  });
});

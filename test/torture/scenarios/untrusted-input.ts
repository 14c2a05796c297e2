/**
 * Torture scenario: input an outsider controls. A directory copied from
 * elsewhere (an agent module registered, an interrupted auto-mode task) is
 * opened by a host with a runner, and every action is tried on it; start
 * requests name paths for agents and ids no worker accepts; saves carry
 * values nested around the readers' limit. Nothing of the directory may run,
 * no path may be loaded as an agent, no id answered "running", and no save
 * may write what its readers refuse (or refuse what they read).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import type { ApiMethod } from '../../../shared/api/contract.js';
import { ApiError } from '../../../shared/api/api-error.js';
import { dispatch } from '../../../shared/api/dispatch.js';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { HostService } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { MAX_VALUE_DEPTH, WriteLimitError } from '../../../electron/store/write-limits.js';
import { freshCheckpoint } from '../../../bench/lib/fresh-checkpoint.js';
import { pick, Tally, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';

const CHECKS = [
  'code of an untrusted directory ran',
  'an action on an untrusted directory not refused with the reason',
  'a path taken for an agent name',
  'a task id no worker accepts answered as running',
  'a save its readers refuse was written',
  'a save its readers accept was refused',
] as const;

const PATH_AGENTS = [
  '/etc/passwd',
  '../downloaded/agents/marked.mjs',
  './agents/marked.mjs',
  'agents/marked.mjs',
  'x.js',
  'C:\\evil.js',
  '/tmp/a.ts',
];
const BAD_IDS = ['é', 'x.json', 'a'.repeat(200), '🙂'.repeat(70), 'y.tmp', '.hidden', '-dash', 'sp ace', 'tab\tid', 'ü'.repeat(10)];

function nested(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = i % 2 ? { k: v } : [v];
  return v;
}

/** Run the scenario; see the module comment. */
export async function untrustedInput(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('untrusted input (trust, agent names, task ids, nesting)', CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-untrusted-')));
  const root = path.join(base, 'downloaded');
  const marker = path.join(base, 'imported.txt');
  await fs.mkdir(path.join(root, 'agents'), { recursive: true });
  await fs.writeFile(
    path.join(root, 'agents/marked.mjs'),
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'x');\n`,
  );
  await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ module: './agents/marked.mjs' }] }));
  const store = openStore(root);
  const fresh = freshCheckpoint({
    taskId: 'auto-task',
    taskName: 'auto',
    goal: 'resume me',
    steps: 2,
    at: '2026-01-01T00:00:00Z',
    phase: 'start',
  });
  const { version: _v, ...first } = fresh;
  await store.create({ ...first, status: 'running', recovery: { ...first.recovery, mode: 'auto' } });

  const untrusted = new HostService({
    host: 'web',
    runner: createHostRunner(),
    trust: { isTrusted: async () => false, trust: async () => {} },
  });
  const trusted = new HostService({
    host: 'web',
    runner: createHostRunner(),
    trust: { isTrusted: async () => true, trust: async () => {} },
    recoverOnOpen: false,
  });
  let spawned = 0;
  trusted.subscribe((e) => {
    if (e.type === 'runner' && e.state === 'started') spawned++;
  });
  try {
    // The trusted host serves a directory of its own: its catalog is the built-ins, loaded once.
    const trustedRoot = path.join(base, 'trusted');
    await fs.mkdir(trustedRoot);
    await trusted.open(trustedRoot);
    await untrusted.open(root);
    await untrusted.recovered();
    const actions: [ApiMethod, unknown][] = [
      ['startTask', { agent: 'checkpoint-demo' }],
      ['resumeTask', { taskId: 'auto-task' }],
      ['approveResume', { taskId: 'auto-task' }],
      ['rejectResume', { taskId: 'auto-task', reason: 'no' }],
      ['editStepResult', { taskId: 'auto-task', stepId: 's1', value: 1 }],
    ];
    const other = openStore(path.join(base, 'limits'));
    await other.create(freshCheckpoint({ taskId: 'deep', taskName: 'deep', goal: 'g', steps: 1, at: '2026-01-01T00:00:00Z', phase: 'p' }));
    let version = 1;
    for (let i = 0; i < opts.runs; i++) {
      tally.runs++;
      const kind = pick(random, 4);
      if (kind === 0) {
        const [method, input] = actions[pick(random, actions.length)];
        const err = await dispatch(untrusted, method, input).then(
          () => null,
          (e: unknown) => e,
        );
        if (!(err instanceof ApiError) || !err.message.includes('is not trusted'))
          tally.violation('an action on an untrusted directory not refused with the reason', `${method}: ${String(err)}`);
      } else if (kind === 1) {
        const agent = PATH_AGENTS[pick(random, PATH_AGENTS.length)];
        const before = spawned;
        const err = await dispatch(trusted, 'startTask', { agent }).then(
          () => null,
          (e: unknown) => e,
        );
        if (!(err instanceof ApiError) || spawned !== before) tally.violation('a path taken for an agent name', `${agent}: ${String(err)}`);
      } else if (kind === 2) {
        const taskId = BAD_IDS[pick(random, BAD_IDS.length)];
        const err = await dispatch(trusted, 'startTask', { agent: 'checkpoint-demo', taskId }).then(
          () => null,
          (e: unknown) => e,
        );
        if (!(err instanceof ApiError) || err.message.includes(base))
          tally.violation('a task id no worker accepts answered as running', `${JSON.stringify(taskId)}: ${String(err)}`);
      } else {
        tally.faults++;
        const depth = MAX_VALUE_DEPTH - 20 + pick(random, 60);
        const cp = (await other.getTask('deep'))!.checkpoint!;
        const { version: _cv, ...next } = cp;
        const saved = await other.save('deep', { expectedVersion: version, checkpoint: next, results: { s1: nested(depth) } }).then(
          () => true,
          (e: unknown) => (e instanceof WriteLimitError ? false : Promise.reject(e)),
        );
        if (saved) version++;
        const read = await openStore(path.join(base, 'limits')).getTask('deep');
        if (depth > MAX_VALUE_DEPTH && (saved || read?.problems.length))
          tally.violation('a save its readers refuse was written', `depth ${depth}: ${JSON.stringify(read?.problems)}`);
        if (depth <= MAX_VALUE_DEPTH && (!saved || read?.problems.length || read?.checkpoint?.version !== version))
          tally.violation('a save its readers accept was refused', `depth ${depth}`);
      }
    }
    const ran = await fs.access(marker).then(
      () => true,
      () => false,
    );
    const status = (await openStore(root).getTask('auto-task'))?.checkpoint?.status;
    if (ran || status !== 'running') tally.violation('code of an untrusted directory ran', `module imported: ${ran}; auto-task ${status}`);
    tally.figures['starts spawned'] = spawned;
  } finally {
    await untrusted.close();
    await trusted.close();
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}

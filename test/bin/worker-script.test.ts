/**
 * The worker as the compiled CLI runs it (bin/worker-script.mjs): one
 * CommonJS script and its loader, with V8's code cache written from a run of
 * the demo agent. Built here into a folder of the test's own; then a
 * TypeScript module agent (tsx registered, the module imported: both through
 * import(), which code taken from the cache only has as the loader hands it
 * over) runs with that cache taken. The agent's project takes zod from the
 * repository's packages, as a user's project has its own.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkerScript, writeWorkerCodeCache } from '../../bin/worker-script.mjs';
import { REPO } from '../support/node-bundle.js';
import { writeAgentProject, type AgentProject } from '../electron/runtime/agent-project.js';

let outdir: string;
let tmp: string;
let project: AgentProject;

const TS_AGENT = `
import { z } from 'zod';

const steps: { id: string; name: string }[] = [{ id: 'only', name: 'the only step' }];
export default {
  name: 'typed',
  description: 'a TypeScript agent with no imports',
  options: z.object({}),
  goal: () => 'run one step',
  plan: () => steps,
  async run(ctx: { step(id: string, fn: () => Promise<string>): Promise<unknown> }) {
    await ctx.step('only', async () => 'done in TypeScript');
  },
};
`;

beforeAll(async () => {
  // Under the repository, as dist/bundle/ is, so the packages the script leaves out (tsx) resolve.
  fs.mkdirSync(path.join(REPO, '.waystation-tmp'), { recursive: true });
  outdir = fs.mkdtempSync(path.join(REPO, '.waystation-tmp', 'worker-script-'));
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-worker-script-'));
  project = await writeAgentProject(tmp, 'typed.ts', TS_AGENT);
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(project.project, 'node_modules'), 'dir');
  await bundleWorkerScript(REPO, outdir);
  writeWorkerCodeCache(outdir);
}, 120_000);
afterAll(() => {
  fs.rmSync(outdir, { recursive: true, force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
});

it('runs a TypeScript module agent from the code cache the demo run wrote', () => {
  expect(fs.statSync(path.join(outdir, 'worker.cjs.cache')).size).toBeGreaterThan(0);
  const job = {
    kind: 'start',
    root: project.root,
    taskId: 'typed-1',
    agentRef: { name: 'typed', module: path.relative(project.project, project.moduleFile), project_root: '..' },
    options: {},
  };
  const r = spawnSync(process.execPath, [path.join(outdir, 'worker-loader.cjs')], {
    cwd: project.project,
    encoding: 'utf8',
    env: { ...process.env, WAYSTATION_JOB: JSON.stringify(job), WAYSTATION_WORKER_CODE_CACHE: 'report' },
    timeout: 60_000,
  });
  expect(r.stderr).toContain('worker code cache: taken');
  const outcome = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('WAYSTATION_RESULT '))
    .map((l) => JSON.parse(l.slice('WAYSTATION_RESULT '.length)) as { type: string; outcome?: { status: string } })
    .find((m) => m.type === 'outcome');
  expect(outcome?.outcome?.status, r.stdout + r.stderr).toBe('done');
  expect(r.status).toBe(0);
  const checkpoint = JSON.parse(fs.readFileSync(path.join(project.root, 'typed-1', 'checkpoint.json'), 'utf8')) as {
    status: string;
    plan: { id: string; status: string }[];
  };
  expect(checkpoint.status).toBe('done');
  expect(checkpoint.plan).toEqual([expect.objectContaining({ id: 'only', status: 'done' })]);
});

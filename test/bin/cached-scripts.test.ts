/**
 * The CLI and its worker as the compiled CLI runs them (bin/cached-scripts.mjs):
 * one CommonJS script each and its loader, with V8's code cache written from a
 * run of the demo agent. Built here into a folder of the test's own; then each
 * runs from its cache what only works there when import() is the one the
 * loader hands over (code V8 takes from a cache has none of its own): a
 * TypeScript module agent in the worker (tsx registered, the module
 * imported), and in the CLI the database driver and the terminal's question.
 * The agent's project takes zod from the repository's packages, as a user's
 * project has its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { bundleCachedScripts, writeCodeCaches } from '../../bin/cached-scripts.mjs';
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
  outdir = fs.mkdtempSync(path.join(REPO, '.waystation-tmp', 'cached-scripts-'));
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-cached-scripts-'));
  project = await writeAgentProject(tmp, 'typed.ts', TS_AGENT);
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(project.project, 'node_modules'), 'dir');
  await bundleCachedScripts(REPO, outdir);
  writeCodeCaches(outdir);
}, 180_000);
afterAll(() => {
  fs.rmSync(outdir, { recursive: true, force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Run the `typed` agent of `p` as task `taskId` in a worker from the cache; the task's checkpoint once the worker ends. */
function runTypedAgent(p: AgentProject, taskId: string): { status: string; plan: { id: string; status: string }[] } {
  const job = {
    kind: 'start',
    root: p.root,
    taskId,
    agentRef: { name: 'typed', module: path.relative(p.project, p.moduleFile), project_root: '..' },
    options: {},
  };
  const r = spawnSync(process.execPath, [path.join(outdir, 'worker-loader.cjs')], {
    cwd: p.project,
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
  return JSON.parse(fs.readFileSync(path.join(p.root, taskId, 'checkpoint.json'), 'utf8')) as ReturnType<typeof runTypedAgent>;
}

it('the worker runs a TypeScript module agent from the code cache the demo run wrote', () => {
  expect(fs.statSync(path.join(outdir, 'worker.cjs.cache')).size).toBeGreaterThan(0);
  const checkpoint = runTypedAgent(project, 'typed-1');
  expect(checkpoint.status).toBe('done');
  expect(checkpoint.plan).toEqual([expect.objectContaining({ id: 'only', status: 'done' })]);
});

it('the worker runs a TypeScript module agent of a project that is not an ES module package', async () => {
  // No "type": "module": Node takes the .ts file for CommonJS, which only tsx's CommonJS hook compiles.
  const plain = await writeAgentProject(fs.mkdtempSync(path.join(tmp, 'plain-')), 'typed.ts', TS_AGENT);
  fs.writeFileSync(path.join(plain.project, 'package.json'), '{"name":"plain"}\n');
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(plain.project, 'node_modules'), 'dir');
  const checkpoint = runTypedAgent(plain, 'typed-2');
  expect(checkpoint.status).toBe('done');
  expect(checkpoint.plan).toEqual([expect.objectContaining({ id: 'only', status: 'done' })]);
});

/** The bundled CLI, from its cache (reported on stderr), with the offline model and a trust store of the test's own. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [path.join(outdir, 'cli-loader.cjs'), ...args], {
    cwd: tmp,
    encoding: 'utf8',
    env: { ...cliEnv(), ...env },
    timeout: 60_000,
  });
}
function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WAYSTATION_CLI_CODE_CACHE: 'report',
    WAYSTATION_OFFLINE_LATENCY_MS: '0',
    SKIP_FAILURE: '1',
  };
  env.WAYSTATION_TRUST_FILE = path.join(tmp, 'trusted.json');
  env.NO_COLOR = '1';
  delete env.OPENAI_API_KEY;
  return env;
}

describe('the CLI from its code cache', () => {
  it('runs the demo, its worker from its own cache', () => {
    const dir = path.join(tmp, 'demo');
    const r = cli(['run', dir, 'checkpoint-demo', '--task', 'demo-1'], { WAYSTATION_WORKER_CODE_CACHE: 'report' });
    expect(r.stderr).toContain('CLI code cache: taken');
    // The worker's stderr, passed on by the runner.
    expect(r.stderr).toContain('worker code cache: taken');
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('demo-1 done');
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'demo-1', 'checkpoint.json'), 'utf8'))).toMatchObject({ status: 'done' });
  });

  it('loads the database driver when a database is named', async () => {
    // A port nothing listens on: the driver loads and reports the refused connection.
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const r = cli(['ls', `postgresql://waystation@127.0.0.1:${port}/nothing`]);
    expect(r.stderr).toContain('CLI code cache: taken');
    expect(r.stderr).toContain('cannot reach the PostgreSQL server');
    expect(r.stderr).not.toContain('ERR_VM_DYNAMIC_IMPORT');
    expect(r.status).not.toBe(0);
  });

  const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
  it.skipIf(!hasScript)('asks on a terminal whether to trust a directory (skipped without util-linux `script` for a terminal)', () => {
    const dir = path.join(tmp, 'downloaded');
    fs.mkdirSync(path.join(dir, 'agents'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'agents', 'marked.mjs'), 'export default {};\n');
    fs.writeFileSync(
      path.join(dir, 'waystation.config.json'),
      JSON.stringify({ agents: [{ module: './agents/marked.mjs', name: 'marked' }] }),
    );
    const command = [process.execPath, path.join(outdir, 'cli-loader.cjs'), 'run', dir, 'marked', '--task', 'm']
      .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
      .join(' ');
    // script(1) gives the command a terminal, so the CLI asks; the answer typed is no.
    const r = spawnSync('script', ['-qec', command, '/dev/null'], {
      cwd: tmp,
      encoding: 'utf8',
      env: cliEnv(),
      input: 'n\n',
      timeout: 60_000,
    });
    expect(r.stdout).toContain('CLI code cache: taken');
    expect(r.stdout).toContain(`Trust ${dir} and run it? [y/N]`);
    expect(r.stdout).toContain(`${dir} was not trusted; nothing was run`);
    expect(r.status).toBe(2);
    expect(fs.existsSync(path.join(dir, 'm'))).toBe(false);
  });
});

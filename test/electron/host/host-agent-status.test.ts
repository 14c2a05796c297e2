/**
 * What the host tells the task view about a task's agent: a module agent
 * that is where the task recorded it, changed since, gone, or present but no
 * longer loading (learnt from the last resume through the host). Real tasks
 * made by a real module agent, on real temporary directories; the task is
 * never written by any of it.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostEvent } from '../../../shared/api/contract.js';
import { runCli } from '../../../electron/cli/main.js';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { HostService } from '../../../electron/host/host-service.js';
import { ModuleHashCache } from '../../../electron/host/task-agent-status.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { GATED_AGENT as GATED, writeAgentProject } from '../runtime/agent-project.js';
import { trustAll } from '../../support/trust-all.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let tmp: string;
let root: string;
let moduleFile: string;
let gate: string;
let service: HostService | null = null;

useOfflineWorkers();
beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-host-agent-')));
  ({ root, moduleFile, gate } = await writeAgentProject(tmp, 'gated.ts', GATED));
  let err = '';
  const code = await runCli(['run', root, moduleFile, '--task', 'g', '--gate', gate], {
    out: () => {},
    err: (s) => void (err += s),
    color: false,
  });
  expect(code, err).toBe(RunExit.failed);
});
afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(tmp, { recursive: true, force: true });
});

const versions = async () => (await openStore(root).history('g')).length;

describe("getTask's agent status", () => {
  it('reports the module as recorded, then changed (with both hashes), then gone', async () => {
    service = new HostService({ host: 'web' });
    await service.open(root);
    const before = await versions();

    expect((await service.getTask({ taskId: 'g' })).agent_status).toEqual({
      name: 'gated',
      origin: 'module',
      available: true,
      module: 'agents/gated.ts',
      recorded_sha256: sha256(GATED),
      current_sha256: sha256(GATED),
    });

    const edited = `${GATED}\n// a later edit\n`;
    await fs.writeFile(moduleFile, edited);
    const changed = (await service.getTask({ taskId: 'g' })).agent_status;
    expect(changed).toMatchObject({
      available: true,
      module_changed: true,
      recorded_sha256: sha256(GATED),
      current_sha256: sha256(edited),
    });
    expect(changed?.problem).toContain('agents/gated.ts changed since the task recorded it');

    await fs.rm(moduleFile);
    const gone = (await service.getTask({ taskId: 'g' })).agent_status;
    expect(gone).toMatchObject({ origin: 'module', available: false, recorded_sha256: sha256(GATED) });
    expect(gone?.current_sha256).toBeUndefined();
    expect(gone?.problem).toContain(`the agent module ${moduleFile} cannot be found`);
    // Looking is all it does.
    expect(await versions()).toBe(before);
  });

  it('keeps what a failed load said while the module is the file that failed', async () => {
    const events: HostEvent[] = [];
    service = new HostService({ host: 'web', runner: createHostRunner(), trust: trustAll, recoverOnOpen: false });
    service.subscribe((e) => void events.push(e));
    await service.open(root);
    const before = await versions();

    const broken = "throw new Error('broken by an edit');\n";
    await fs.writeFile(moduleFile, broken);
    await service.resumeTask({ taskId: 'g' });
    await expect.poll(() => events.some((e) => e.type === 'runner' && e.state === 'exited'), { timeout: 30_000 }).toBe(true);

    const failed = (await service.getTask({ taskId: 'g' })).agent_status;
    expect(failed).toMatchObject({ available: true, module_changed: true, current_sha256: sha256(broken) });
    expect(failed?.load_problem).toContain('fails to load: broken by an edit');
    expect(failed?.load_problem).toContain('left untouched');
    expect(await versions()).toBe(before);

    // Another edit may be the fix: the old failure no longer describes the file.
    await fs.writeFile(moduleFile, GATED);
    expect((await service.getTask({ taskId: 'g' })).agent_status?.load_problem).toBeUndefined();
  }, 60_000);
});

describe("the host's agent list", () => {
  it('follows waystation.config.json: a rewrite is announced as directory-changed of the same root and listed', async () => {
    const other = path.join(path.dirname(moduleFile), 'other.ts');
    await fs.writeFile(other, GATED.replace("name: 'gated'", "name: 'other'").replace("'waits for a gate file'", "'another agent'"));
    const config = path.join(root, 'waystation.config.json');
    await fs.writeFile(config, JSON.stringify({ agents: [{ module: '../agents/gated.ts' }] }));
    const events: HostEvent[] = [];
    service = new HostService({
      host: 'web',
      runner: createHostRunner(),
      trust: trustAll,
      recoverOnOpen: false,
      watch: { quietMs: 30, maxDelayMs: 150 },
    });
    service.subscribe((e) => void events.push(e));
    await service.open(root);
    // The watcher starts with the first listing.
    await service.listTasks();
    const registered = async () =>
      (await service!.listAgents()).filter((a) => a.origin === 'registered').map((a) => [a.name, a.problem ?? null]);
    expect(await registered()).toEqual([['gated', null]]);

    // Opening announced the directory once already; what counts is an announcement after the rewrite.
    const announced = (after: number) => events.slice(after).some((e) => e.type === 'directory-changed' && e.root === root);
    let seen = events.length;
    await fs.writeFile(
      config,
      JSON.stringify({
        agents: [
          { module: '../agents/gated.ts' },
          { module: '../agents/other.ts', name: 'other' },
          { module: '../agents/gone.ts', name: 'md-summarizer' },
        ],
      }),
    );
    await expect.poll(() => announced(seen), { timeout: 15_000 }).toBe(true);
    const listed = await registered();
    expect(listed.slice(0, 2)).toEqual([
      ['gated', null],
      ['other', null],
    ]);
    // Broken, and named like a built-in: shown with its reason rather than hidden behind the built-in.
    expect(listed).toHaveLength(3);
    expect(listed[2][0]).toBe('md-summarizer');
    expect(listed[2][1]).toMatch(/gone\.ts|md-summarizer/);

    seen = events.length;
    await fs.writeFile(config, '{"agents": [');
    await expect.poll(() => announced(seen), { timeout: 15_000 }).toBe(true);
    const broken = (await service.listAgents()).filter((a) => a.origin === 'registered');
    expect(broken.map((a) => a.name)).toEqual(['waystation.config.json']);
    expect(broken[0].problem).toContain('is not valid JSON');
  }, 60_000);
});

describe("the host's agent list, when a module changes", () => {
  it('describes a registered agent again once its module file was edited, with no change to the configuration', async () => {
    await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ module: '../agents/gated.ts' }] }));
    service = new HostService({ host: 'web', runner: createHostRunner(), trust: trustAll, recoverOnOpen: false });
    await service.open(root);
    const gated = async () => (await service!.listAgents()).find((a) => a.origin === 'registered' && a.name === 'gated');
    expect((await gated())?.description).toBe('waits for a gate file');
    // Asked again with nothing changed, the same answer (no new worker is needed for it).
    expect((await gated())?.description).toBe('waits for a gate file');

    await fs.writeFile(moduleFile, GATED.replace("'waits for a gate file'", "'waits for a gate file, then writes a report'"));
    expect((await gated())?.description).toBe('waits for a gate file, then writes a report');
  }, 60_000);
});

describe('the module hash cache', () => {
  it('hashes again when the file is rewritten, even at the same size', async () => {
    const hashes = new ModuleHashCache();
    const file = path.join(tmp, 'm.ts');
    await fs.writeFile(file, 'export const a = 1;\n');
    expect(await hashes.hash(file)).toBe(sha256('export const a = 1;\n'));
    await fs.writeFile(file, 'export const b = 2;\n');
    expect(await hashes.hash(file)).toBe(sha256('export const b = 2;\n'));
    await fs.rm(file);
    expect(await hashes.hash(file)).toBeNull();
  });

  it('does not keep a stale hash for a settled file rewritten with its old modification time put back', async () => {
    const hashes = new ModuleHashCache();
    const file = path.join(tmp, 'm.ts');
    const old = new Date(Date.now() - 3_600_000);
    await fs.writeFile(file, 'export const a = 1;\n');
    await fs.utimes(file, old, old);
    expect(await hashes.hash(file)).toBe(sha256('export const a = 1;\n'));
    await fs.writeFile(file, 'export const b = 2;\n');
    await fs.utimes(file, old, old);
    expect(await hashes.hash(file)).toBe(sha256('export const b = 2;\n'));
  });
});

/**
 * Directory trust in the host: a directory copied from elsewhere, with an
 * agent module registered and an interrupted auto-mode task, runs nothing
 * until a person trusts it; the prompt names what would run; trusting it
 * runs it. And whatever the trust, the host starts only the agents its
 * catalog lists: a path is never an agent name.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/api/api-error.js';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { HostService } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { isTrusted } from '../../../electron/runtime/directory-trust.js';
import { captureCli as cli } from '../cli/capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { trustAll } from '../../support/trust-all.js';

let tmp: string;
let root: string;
let marker: string;
let service: HostService | null = null;

useOfflineWorkers({ SKIP_FAILURE: undefined });

/** An agent module that leaves a file behind when it is imported: proof that it was, or was not. */
const MARKED_MODULE = (markerFile: string) => `
import { writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(markerFile)}, 'imported');
export default { name: 'marked', description: 'marks', plan: () => [], run: async () => {}, goal: () => '', options: { safeParse: (v) => ({ success: true, data: v }) } };
`;

beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-host-trust-')));
  root = path.join(tmp, 'downloaded');
  marker = path.join(tmp, 'imported.txt');
  // An auto-mode task that failed at step 3 (the demo's planted failure): a host resumes it on opening.
  const run = await cli('run', root, 'checkpoint-demo', '--task', 'auto-task', '--mode', 'auto', '--max-attempts', '0');
  expect(run.code, run.err).toBe(1);
  await fs.mkdir(path.join(root, 'agents'));
  await fs.writeFile(path.join(root, 'agents/marked.mjs'), MARKED_MODULE(marker));
  await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ module: './agents/marked.mjs' }] }));
  // As copied from elsewhere: never trusted here (the run above trusted the folder it created, before the module).
  expect(await isTrusted(root)).toBe(false);
});
afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(tmp, { recursive: true, force: true });
});

const refusal = async (p: Promise<unknown>): Promise<ApiError> => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
};

describe('an untrusted directory', () => {
  it('imports nothing, resumes nothing, refuses every action with the reason and the way to trust; trusted, it runs', async () => {
    service = new HostService({ host: 'web', runner: createHostRunner() });
    const info = await service.open(root);
    expect(info).toMatchObject({ read_only: true, untrusted: true });
    await service.recovered();
    await service.listAgents();

    const trust = await service.getDirectoryTrust();
    expect(trust).toMatchObject({
      trusted: false,
      can_trust: true,
      agents: [{ name: './agents/marked.mjs', module: './agents/marked.mjs' }],
      resumes: ['auto-task'],
    });
    expect(trust.message).toContain('not trusted');
    expect(trust.message).toContain('./agents/marked.mjs');
    expect(trust.message).toContain('auto-task');

    for (const action of [
      service.startTask({ agent: 'checkpoint-demo', options: {}, mode: 'manual' }),
      service.resumeTask({ taskId: 'auto-task' }),
      service.approveResume({ taskId: 'auto-task' }),
      service.rejectResume({ taskId: 'auto-task', reason: 'no' }),
      service.editStepResult({ taskId: 'auto-task', stepId: 'outline', value: 1 }),
    ]) {
      const err = await refusal(action);
      expect(err.code).toBe('forbidden');
      expect(err.message).toContain('is not trusted');
      expect(err.message).toContain('--trust');
    }
    expect((await openStore(root).getTask('auto-task'))!.checkpoint!.status).toBe('failed');
    await expect(fs.access(marker)).rejects.toThrow();

    // Trusted by a person, from the prompt: opened again to run, its auto-mode task resumes.
    const after = await service.trustDirectory({ path: root });
    expect(after).toMatchObject({ read_only: false, untrusted: false });
    expect(await isTrusted(root)).toBe(true);
    await service.recovered();
    expect((await service.listAgents()).map((a) => a.name)).toContain('marked');
    await fs.access(marker);
  });

  it('names the command agents that trusting would let run', async () => {
    await fs.writeFile(
      path.join(root, 'waystation.config.json'),
      JSON.stringify({ agents: [{ module: './agents/marked.mjs' }, { name: 'py-tool', command: ['python3', 'tool.py'] }] }),
    );
    service = new HostService({ host: 'web', runner: createHostRunner() });
    await service.open(root);
    const trust = await service.getDirectoryTrust();
    expect(trust.commands).toEqual([{ name: 'py-tool', command: ['python3', 'tool.py'] }]);
    expect(trust.message).toContain('the command agent "py-tool" (python3 tool.py)');
    expect(trust.message).toContain('./agents/marked.mjs');
    await expect(fs.access(marker)).rejects.toThrow();
  });

  it('refuses to trust a directory other than the open one', async () => {
    service = new HostService({ host: 'web', runner: createHostRunner() });
    await service.open(root);
    const err = await refusal(service.trustDirectory({ path: tmp }));
    expect(err.code).toBe('forbidden');
    expect(await isTrusted(tmp)).toBe(false);
    expect(await isTrusted(root)).toBe(false);
  });
});

describe('startTask', () => {
  it('never takes a path for an agent name, and starts only what the catalog lists', async () => {
    service = new HostService({ host: 'web', runner: createHostRunner(), trust: trustAll, recoverOnOpen: false });
    await service.open(root);
    const byPath = await refusal(service.startTask({ agent: '/etc/passwd', options: {}, mode: 'manual' }));
    expect(byPath.code).toBe('invalid-input');
    expect(byPath.message).toContain('is a path, not an agent name');
    expect(byPath.message).not.toContain('fails to load');
    const relative = await refusal(service.startTask({ agent: './agents/marked.mjs', options: {}, mode: 'manual' }));
    expect(relative.code).toBe('invalid-input');
    const unknown = await refusal(service.startTask({ agent: 'no-such-agent', options: {}, mode: 'manual' }));
    expect(unknown.code).toBe('not-found');
    expect(unknown.message).toContain('checkpoint-demo');
    expect(unknown.message).not.toContain('did you mean');
    const typo = await refusal(service.startTask({ agent: 'md-sumarizer', options: {}, mode: 'manual' }));
    expect(typo.code).toBe('not-found');
    expect(typo.message).toContain('there is no agent "md-sumarizer" (did you mean "md-summarizer"?)');
  });
});

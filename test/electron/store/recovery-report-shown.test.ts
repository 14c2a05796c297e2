/**
 * The recovery account where people look: `waystation verify` (text and
 * --json) and the host's verifyTask carry it when an interruption left
 * something behind, and say nothing of it when nothing was lost.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { runCli } from '../../../electron/cli/main.js';
import { HostService } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { VerifyResult } from '../../../shared/api/contract.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot('waystation-recovery-shown-');
});
afterEach(async () => {
  await cleanup(root);
});

async function verify(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(['verify', root, ...args], { out: (s) => void (out += s), err: (s) => void (err += s), color: false });
  return { code, out, err };
}

/** A task at version 2 whose save of version 3 lost the power before its commit point. */
async function interrupted(): Promise<void> {
  const store = openStore(root);
  const v1 = (await store.create(makeCheckpoint('t'))).checkpoint;
  await store.save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' } });
  await fs.writeFile(path.join(root, 't', 'versions', '.00000003.json.ab12cd.tmp'), '{"format":"waystation-ver');
}

describe('the recovery account in verify', () => {
  it('is printed by waystation verify, as text and as JSON, and nothing is written', async () => {
    await interrupted();
    const before = await hashTree(root);

    const text = await verify('t');
    expect(text.out).toContain('Recovery after an interruption');
    expect(text.out).toContain('task t recovered to version 2');
    expect(text.out).toContain('the save of version 3 was interrupted before its commit point');
    expect(text.out).toContain('1 temp file(s) of interrupted writes remain (25 bytes)');

    const json = await verify('t', '--json');
    const report = VerifyResult.parse(JSON.parse(json.out));
    expect(report.recovery).toMatchObject({
      latest_version: 2,
      interrupted_versions: [3],
      leftover_temp_files: [{ file: 't/versions/.00000003.json.ab12cd.tmp', bytes: 25 }],
    });
    // The account does not change whether the task verifies: that is about drift and effects.
    expect(json.code).toBe(text.code);
    expect(await hashTree(root)).toEqual(before);
  });

  it('is left out when nothing was lost', async () => {
    await openStore(root).create(makeCheckpoint('t'));
    expect((await verify('t')).out).not.toContain('Recovery');
    expect(JSON.parse((await verify('t', '--json')).out)).not.toHaveProperty('recovery');
  });

  it('follows the refusal when no version reads whole', async () => {
    await fs.mkdir(path.join(root, 't', 'versions'), { recursive: true });
    await fs.writeFile(path.join(root, 't', 'versions', '00000001.json'), '{"format":"waystation-ver');
    const r = await verify('t');
    expect(r.code).toBe(1);
    expect(r.err).toContain('cannot be verified');
    expect(r.err).toContain('task t has no version that reads whole');
  });

  it('comes back from the host, valid against the contract', async () => {
    await interrupted();
    const service = new HostService({ host: 'web', runner: null });
    try {
      await service.open(root);
      const report = VerifyResult.parse(await service.verifyTask({ taskId: 't' }));
      expect(report.recovery?.interrupted_versions).toEqual([3]);
      expect(report.recovery?.account.join('\n')).toContain('the save of version 3 was interrupted');
    } finally {
      await service.close();
    }
  });
});

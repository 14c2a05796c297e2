import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { artifactBaseDir, checkArtifact, verifyTask } from '../../../electron/verify/verify-task.js';
import { VerifyReport } from '../../../shared/checkpoint/verify-report.js';
import type { Artifact } from '../../../shared/checkpoint/schema.js';
import { sampleCheckpoint } from '../../shared/checkpoint/sample-checkpoint.js';

let root: string;
let outside: string;

beforeEach(async () => {
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'waystation-verify-'));
  outside = await fsp.mkdtemp(path.join(os.tmpdir(), 'waystation-outside-'));
});
afterEach(async () => {
  await fsp.rm(root, { recursive: true, force: true });
  await fsp.rm(outside, { recursive: true, force: true });
});

/** Write a file and return the artifact record an agent would have saved for it. */
async function written(dir: string, rel: string, content: string): Promise<Artifact> {
  const file = path.join(dir, rel);
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, content);
  const sha256 = createHash('sha256').update(content).digest('hex');
  return { type: 'file', path: rel, sha256, size: Buffer.byteLength(content), status: 'written' };
}

describe('verifyTask', () => {
  it('finds ok, missing and modified artifacts among real files', async () => {
    const same = await written(root, 'out/same.md', 'unchanged');
    const gone = await written(root, 'out/gone.md', 'soon deleted');
    const edited = await written(root, 'out/edited.md', 'original text');
    const resized = await written(root, 'out/resized.md', 'short');
    await fsp.rm(path.join(root, gone.path));
    await fsp.writeFile(path.join(root, edited.path), 'ORIGINAL TEXT'); // same size, other bytes
    await fsp.writeFile(path.join(root, resized.path), 'a good deal longer');

    const cp = sampleCheckpoint({ artifacts: [same, gone, edited, resized].map((a) => ({ ...a, step_id: 's1' })) });
    const report = await verifyTask(root, cp, { location: 'task-1' });
    expect(VerifyReport.parse(report)).toEqual(report);
    expect(report.artifacts.map((a) => [a.path, a.status])).toEqual([
      ['out/same.md', 'ok'],
      ['out/gone.md', 'missing'],
      ['out/edited.md', 'modified'],
      ['out/resized.md', 'modified'],
    ]);
    expect(report.artifacts[0].actual).toEqual({ sha256: same.sha256, size: same.size });
    expect(report.artifacts[2].actual?.sha256).not.toBe(edited.sha256);
    expect(report.artifacts[3].actual).toEqual({ sha256: null, size: 18 });
    expect(report).toMatchObject({ ok: false, drift: true, base_dir: path.resolve(root) });
  });

  it('is ok when every artifact matches, no effect is uncertain and the invariants hold', async () => {
    const a = await written(root, 'report.md', '# report');
    const report = await verifyTask(root, sampleCheckpoint({ artifacts: [a] }));
    expect(report).toMatchObject({ ok: true, drift: false, uncertain_effects: [], invariant_problems: [] });
  });

  it('lists side effects left at intent or uncertain, and broken invariants', async () => {
    const cp = sampleCheckpoint({
      artifacts: [],
      total_steps: 7,
      side_effects: [
        { id: 'e1', type: 'http_post', status: 'done', idempotency_key: 'k1' },
        { id: 'e2', type: 'git_commit', status: 'intent', idempotency_key: 'k2', step_id: 's2' },
        { id: 'e3', type: 'email', status: 'uncertain', idempotency_key: 'k3', reconciliation: 'awaiting-human' },
      ],
    });
    const report = await verifyTask(root, cp, { location: 'task-1' });
    expect(report.uncertain_effects.map((e) => [e.id, e.status, e.step_id])).toEqual([
      ['e2', 'intent', 's2'],
      ['e3', 'uncertain', null],
    ]);
    expect(report.uncertain_effects[1].message).toMatch(/awaiting-human/);
    expect(report.invariant_problems).toEqual([expect.objectContaining({ file: 'task-1/checkpoint.json', reason: 'invariant' })]);
    expect(report).toMatchObject({ ok: false, drift: false });
  });

  it('resolves relative paths against the agent project root when one is recorded', async () => {
    const a = await written(path.join(root, 'project'), 'dist/app.js', 'code');
    const cp = sampleCheckpoint({ artifacts: [a], agent: { name: 'builder', project_root: 'project' } });
    expect(artifactBaseDir(root, cp)).toBe(path.join(root, 'project'));
    expect((await verifyTask(root, cp)).artifacts[0].status).toBe('ok');
  });

  it('accepts a deleted artifact that is absent and flags one that came back', async () => {
    const a = await written(root, 'tmp/scratch.txt', 'scratch');
    const deleted = { ...a, status: 'deleted' };
    expect((await checkArtifact(root, deleted)).status).toBe('modified');
    await fsp.rm(path.join(root, a.path));
    expect((await checkArtifact(root, deleted)).status).toBe('ok');
  });

  it('reports a directory where a file was recorded as unreadable', async () => {
    await fsp.mkdir(path.join(root, 'out'), { recursive: true });
    const check = await checkArtifact(root, { type: 'file', path: 'out', sha256: 'a'.repeat(64), size: 1, status: 'written' });
    expect(check.status).toBe('unreadable');
  });
});

describe('artifact paths that leave the base', () => {
  it('refuses a relative path that climbs out with ..', async () => {
    const secret = await written(outside, 'secret.txt', 'top secret');
    const rel = path.relative(root, path.join(outside, 'secret.txt'));
    const check = await checkArtifact(root, { ...secret, path: rel });
    expect(check).toMatchObject({ status: 'outside-root', resolved_path: null, actual: null });
  });

  it('refuses a relative path through a symlink that points outside, without reading the target', async () => {
    const secret = await written(outside, 'secret.txt', 'top secret');
    await fsp.symlink(outside, path.join(root, 'linked'));
    const check = await checkArtifact(root, { ...secret, path: 'linked/secret.txt' });
    expect(check).toMatchObject({ status: 'outside-root', actual: null });
    expect(check.message).toMatch(/symlink/);
  });

  it('follows a symlink that stays inside the base', async () => {
    const a = await written(root, 'real/data.txt', 'data');
    await fsp.symlink(path.join(root, 'real'), path.join(root, 'alias'));
    expect((await checkArtifact(root, { ...a, path: 'alias/data.txt' })).status).toBe('ok');
  });

  it('checks absolute paths where they are, unless the caller confines them', async () => {
    const a = await written(outside, 'out.txt', 'agent output');
    const absolute = { ...a, path: path.join(outside, 'out.txt') };
    expect((await checkArtifact(root, absolute)).status).toBe('ok');
    expect((await checkArtifact(root, absolute, false)).status).toBe('outside-root');
  });
});

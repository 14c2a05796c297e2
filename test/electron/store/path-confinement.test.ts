import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PathOutsideRootError, isWithin, resolveInsideRoot, resolveNamedInsideRoot } from '../../../electron/store/path-confinement.js';

let root: string;
let outside: string;

beforeAll(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-root-')));
  outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-outside-')));
  await fs.mkdir(path.join(root, 'task', 'versions'), { recursive: true });
  await fs.writeFile(path.join(root, 'task', 'checkpoint.json'), '{}');
  await fs.symlink(outside, path.join(root, 'out-link'));
  await fs.symlink(path.join(root, 'task'), path.join(root, 'in-link'));
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

describe('resolveInsideRoot', () => {
  it('resolves existing and not-yet-existing paths inside the root', async () => {
    expect(resolveInsideRoot(root, 'task/checkpoint.json')).toBe(path.join(root, 'task', 'checkpoint.json'));
    expect(resolveInsideRoot(root, 'task/versions/00000009.json')).toBe(path.join(root, 'task', 'versions', '00000009.json'));
    expect(resolveInsideRoot(root, 'new-task/checkpoint.json')).toBe(path.join(root, 'new-task', 'checkpoint.json'));
    expect(resolveInsideRoot(root, '')).toBe(root);
  });

  it('follows a symlink that stays inside', async () => {
    expect(resolveInsideRoot(root, 'in-link/checkpoint.json')).toBe(path.join(root, 'task', 'checkpoint.json'));
  });

  it.each([
    ['../etc/passwd', 'climbs'],
    ['task/../../x', 'climbs'],
    ['..\\x', 'climbs'],
    ['/etc/passwd', 'absolute'],
    ['C:\\Windows', 'absolute'],
    ['\\\\server\\share', 'absolute'],
    ['task/\0x', 'NUL'],
    ['out-link/anything', 'symbolic link'],
    ['out-link', 'symbolic link'],
  ])('refuses %j (%s)', (requested, why) => {
    expect(() => resolveInsideRoot(root, requested)).toThrow(PathOutsideRootError);
    expect(() => resolveInsideRoot(root, requested)).toThrow(why);
  });
});

describe('isWithin', () => {
  it('does not take a sibling with a common prefix for a child', () => {
    expect(isWithin('/a/root', '/a/root/x')).toBe(true);
    expect(isWithin('/a/root', '/a/root')).toBe(true);
    expect(isWithin('/a/root', '/a/root-2/x')).toBe(false);
    expect(isWithin('/a/root', '/a')).toBe(false);
  });
});

describe('resolveNamedInsideRoot', () => {
  it('takes a folder relative to the root, or absolute inside it (the root itself too), as resolveInsideRoot does', () => {
    expect(resolveNamedInsideRoot(root, 'task')).toBe(path.join(root, 'task'));
    expect(resolveNamedInsideRoot(root, path.join(root, 'task'))).toBe(path.join(root, 'task'));
    expect(resolveNamedInsideRoot(root, path.join(root, 'in-link'))).toBe(path.join(root, 'task'));
    expect(resolveNamedInsideRoot(root, root)).toBe(root);
  });

  it('refuses an absolute folder outside the root, and one that leads out through a link or ..', () => {
    expect(() => resolveNamedInsideRoot(root, outside)).toThrow(PathOutsideRootError);
    expect(() => resolveNamedInsideRoot(root, outside)).toThrow(/it names a folder outside the directory/);
    expect(() => resolveNamedInsideRoot(root, path.join(root, 'out-link'))).toThrow(/through a symbolic link/);
    expect(() => resolveNamedInsideRoot(root, '../elsewhere')).toThrow(/climbs out/);
  });
});

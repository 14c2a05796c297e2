import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_RECENT, loadSettings } from '../../../electron/main/settings.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-settings-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('desktop settings', () => {
  it('remembers recent folders, newest first, without duplicates, across restarts', async () => {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    await fs.mkdir(a);
    await fs.mkdir(b);
    const settings = await loadSettings(dir);
    await settings.remember(a, { readOnly: false });
    await settings.remember(b, { readOnly: false });
    await settings.remember(a, { readOnly: false });
    expect(settings.list()).toEqual([a, b]);
    const reloaded = await loadSettings(dir);
    expect(reloaded.list()).toEqual([a, b]);
    expect(await reloaded.last()).toBe(a);
  });

  it('keeps at most MAX_RECENT folders and skips vanished ones for "last"', async () => {
    const settings = await loadSettings(dir);
    for (let i = 0; i < MAX_RECENT + 3; i++) await settings.remember(path.join(dir, `gone-${i}`), { readOnly: false });
    expect(settings.list()).toHaveLength(MAX_RECENT);
    expect(await settings.last()).toBeNull();
  });

  it('saves again after a save that failed', async () => {
    // A file where the settings folder should be: the first save cannot make its folder.
    const settingsDir = path.join(dir, 'config');
    await fs.writeFile(settingsDir, 'not a folder');
    const settings = await loadSettings(settingsDir);
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    await expect(settings.remember(a, { readOnly: false })).rejects.toThrow();
    await fs.rm(settingsDir);
    await settings.remember(b, { readOnly: false });
    expect((await loadSettings(settingsDir)).list()).toEqual([b, a]);
  });

  it('remembers which folders were last opened read-only, until one is opened to run tasks', async () => {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    const settings = await loadSettings(dir);
    await settings.remember(a, { readOnly: true });
    await settings.remember(b, { readOnly: false });
    expect(settings.readOnly()).toEqual([a]);
    expect((await loadSettings(dir)).readOnly()).toEqual([a]);
    expect(JSON.parse(await fs.readFile(path.join(dir, 'settings.json'), 'utf8'))).toEqual({ recent: [b, a], read_only: [a] });

    // Opened again to run tasks: no longer read-only.
    await settings.remember(a, { readOnly: false });
    expect((await loadSettings(dir)).readOnly()).toEqual([]);
    // A folder pushed off the recent list is forgotten in both lists.
    await settings.remember(a, { readOnly: true });
    for (let i = 0; i < MAX_RECENT; i++) await settings.remember(path.join(dir, `other-${i}`), { readOnly: false });
    expect(settings.list()).not.toContain(a);
    expect(settings.readOnly()).toEqual([]);
  });

  it('reads a read-only entry only for a folder among the recent ones', async () => {
    const a = path.join(dir, 'a');
    await fs.writeFile(
      path.join(dir, 'settings.json'),
      JSON.stringify({ recent: [a], read_only: [a, path.join(dir, 'not-recent'), 'relative'] }),
    );
    expect((await loadSettings(dir)).readOnly()).toEqual([a]);
  });

  it('starts empty from a damaged settings file', async () => {
    await fs.writeFile(path.join(dir, 'settings.json'), '{"recent": [1, 2');
    expect((await loadSettings(dir)).list()).toEqual([]);
  });
});

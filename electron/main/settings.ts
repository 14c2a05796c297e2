/**
 * The desktop app's settings: the recent folders, which of them were last
 * opened read-only, and the last one opened, kept as one small JSON file in
 * Electron's userData folder.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { RecentFolders } from '../host/host-ports.js';
import { writeFileAtomic } from '../store/atomic-file.js';
import { nodeFs } from '../store/store-fs.js';

const SettingsFile = z.object({
  recent: z.array(z.string()).default([]),
  /** Recent folders last opened read-only. */
  read_only: z.array(z.string()).default([]),
});

/** How many recent folders are remembered. */
export const MAX_RECENT = 10;

export interface DesktopSettings extends RecentFolders {
  /** The folder opened last, when it still exists. */
  last(): Promise<string | null>;
}

/**
 * Load the settings from `dir/settings.json` (a missing or broken file means
 * no recent folders) and save them on every change, atomically.
 */
export async function loadSettings(dir: string): Promise<DesktopSettings> {
  const file = path.join(dir, 'settings.json');
  let recent: string[] = [];
  let readOnly = new Set<string>();
  // Read through `recent`: a folder that left the recent list is not reported, nor saved.
  const readOnlyRecent = () => recent.filter((r) => readOnly.has(r));
  try {
    const parsed = SettingsFile.safeParse(JSON.parse(await fs.readFile(file, 'utf8')));
    if (parsed.success) {
      recent = parsed.data.recent.filter((p) => path.isAbsolute(p)).slice(0, MAX_RECENT);
      readOnly = new Set(parsed.data.read_only);
    }
  } catch {
    // First start, or a file damaged by hand: start over rather than refuse to start.
  }
  // Saves run one after the other so the newest list lands last; each waits for the one before only to
  // finish, not to succeed, so a save that failed (a full disk, a folder made read-only) blocks no later one.
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    const text = JSON.stringify({ recent, read_only: readOnlyRecent() }, null, 2) + '\n';
    const attempt = saving
      .catch(() => undefined)
      .then(async () => {
        await fs.mkdir(dir, { recursive: true });
        await writeFileAtomic(nodeFs, file, text);
      });
    saving = attempt;
    return attempt;
  };
  return {
    list: () => [...recent],
    readOnly: readOnlyRecent,
    async remember(root: string, opts: { readOnly: boolean }) {
      recent = [root, ...recent.filter((r) => r !== root)].slice(0, MAX_RECENT);
      if (opts.readOnly) readOnly.add(root);
      else readOnly.delete(root);
      await save();
    },
    async last() {
      for (const candidate of recent) {
        const stats = await fs.stat(candidate).catch(() => null);
        if (stats?.isDirectory()) return candidate;
      }
      return null;
    },
  };
}

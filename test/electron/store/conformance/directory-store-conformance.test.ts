import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../../electron/store/directory-store.js';
import { cleanup, tempRoot } from '../store-test-helpers.js';
import { describeStoreConformance } from './store-conformance.js';

/** Every file under `dir`, relative path -> text. */
async function texts(dir: string, base = dir, out = new Map<string, string>()): Promise<Map<string, string>> {
  for (const d of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const abs = path.join(dir, d.name);
    if (d.isDirectory()) await texts(abs, base, out);
    else if (d.isFile()) out.set(path.relative(base, abs), await fs.readFile(abs, 'utf8'));
  }
  return out;
}

describeStoreConformance('the directory store', async () => {
  const root = await tempRoot('waystation-conformance-');
  return {
    open: () => openStore(root),
    location: root,
    footprint: () => texts(root),
    cleanup: () => cleanup(root),
  };
});

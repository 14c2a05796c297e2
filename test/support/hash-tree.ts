/**
 * What a folder holds, to prove a read or a refused operation changed nothing: every file's SHA-256 by its
 * relative path, a symlink by its target's text and a named pipe as such (reading one would wait for a writer).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** sha256 of every file under `dir` (relative path -> hash), temp files included, symlinks by their target text. */
export async function hashTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      const abs = path.join(dir, r);
      if (e.isSymbolicLink()) out[r] = `link:${await fs.readlink(abs)}`;
      else if (e.isDirectory()) await walk(r);
      else if (e.isFIFO()) out[r] = 'fifo';
      else
        out[r] = createHash('sha256')
          .update(await fs.readFile(abs))
          .digest('hex');
    }
  };
  await walk('');
  return out;
}

/** One hash of everything `hashTree` sees: equal digests, an unchanged folder. */
export async function treeDigest(dir: string): Promise<string> {
  const files = await hashTree(dir);
  const h = createHash('sha256');
  for (const name of Object.keys(files).sort()) h.update(`${name}\0${files[name]}\n`);
  return h.digest('hex');
}

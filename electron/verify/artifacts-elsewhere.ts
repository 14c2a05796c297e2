/**
 * The artifact files a copy of tasks leaves behind: a copy carries
 * checkpoints, not the files their artifacts name, and a relative artifact
 * path is resolved against the store's artifact root (artifactBaseDir), which
 * differs between two stores. A file found where the source resolves it and
 * not where the destination does would count as missing there (verify says
 * drift, resume stops for a person).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CheckpointSource } from '../store/store-types.js';
import { artifactBaseDir } from './verify-task.js';

export interface ArtifactsElsewhere {
  /** Files, one per artifact, the source finds and the destination would not. */
  files: number;
  /** Where the source finds them, and where the destination looks (the first task's, when tasks differ). */
  from: string;
  to: string;
}

const exists = (p: string) =>
  fs.stat(p).then(
    (st) => st.isFile(),
    () => false,
  );

/** The artifact files of tasks `taskIds` (as copied into `dest`) that `source` finds and `dest` would not; null when none. */
export async function artifactsElsewhere(
  source: CheckpointSource,
  dest: CheckpointSource,
  taskIds: readonly string[],
): Promise<ArtifactsElsewhere | null> {
  let found: ArtifactsElsewhere | null = null;
  for (const id of taskIds) {
    const cp = (await dest.getTask(id))?.checkpoint;
    if (!cp) continue;
    const from = artifactBaseDir(source.artifactRoot, cp);
    const to = artifactBaseDir(dest.artifactRoot, cp);
    if (from === to) continue;
    for (const a of cp.artifacts) {
      // An absolute path names one file whichever store reads it.
      if (path.isAbsolute(a.path)) continue;
      if ((await exists(path.resolve(from, a.path))) && !(await exists(path.resolve(to, a.path)))) {
        found ??= { files: 0, from, to };
        found.files++;
      }
    }
  }
  return found;
}

/**
 * The artifact files a copy of tasks leaves behind: a copy carries
 * checkpoints, not the files their artifacts name, and a relative artifact
 * path is resolved against the store's artifact root (artifactBaseDir), which
 * differs between two stores. A file found where the source resolves it and
 * not where the destination does would count as missing there (verify says
 * drift, resume stops for a person).
 */
import type { CheckpointSource } from '../store/store-types.js';
import { artifactBaseDir, checkArtifact } from './verify-task.js';

export interface ArtifactsElsewhere {
  /** Files, one per artifact, the source finds and the destination would not. */
  files: number;
  /** Where the source finds them, and where the destination looks (the first task's, when tasks differ). */
  from: string;
  to: string;
}

/** What verify says of a file that is there (its size as recorded or not). */
const FOUND: ReadonlySet<string> = new Set(['ok', 'modified']);

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
      // Looked up as verify looks (a path leading outside the folder is not, a deleted one is found absent), by stat.
      const there = await checkArtifact(to, a, true, false);
      if (there.status === 'missing' && FOUND.has((await checkArtifact(from, a, true, false)).status)) {
        found ??= { files: 0, from, to };
        found.files++;
      }
    }
  }
  return found;
}

/**
 * The agent status the task view shows: the runtime's `agentStatus` (found
 * or not, changed or not, decided without running agent code) put in the
 * API's shape, with what the last load through this host said.
 *
 * The task view asks at every refresh, and a running task is refreshed at
 * every version it writes, so module hashes are kept per file and computed
 * again only when the file's stat changes.
 */
import fs from 'node:fs/promises';
import type { TaskAgentStatus } from '../../shared/api/contract.js';
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import type { TaskFormat } from '../../shared/checkpoint/task-summary.js';
import { agentStatus } from '../runtime/agent-status.js';
import { hashCodeFile } from '../runtime/code-file-hash.js';
import { unrecordedAgentProblem } from './unrecorded-agent.js';

/**
 * File times are coarse (a clock tick of a few ms on Linux), so two writes of
 * the same size inside one tick leave the same stat. A hash is kept only for
 * a file last modified longer ago than this, as git does with racily clean
 * index entries: a file just written is hashed at every ask.
 */
const SETTLED_NS = 2_000_000_000n;

interface KeptHash {
  /** mtime, ctime, size and inode: a rewrite or a rename over the file changes at least one of them. */
  stamp: string;
  sha256: string;
}

/** Module hashes by file, reused while the file's stat is unchanged. */
export class ModuleHashCache {
  private readonly kept = new Map<string, KeptHash>();

  /**
   * The file's sha256, or null when it cannot be read.
   *
   * The stat is taken before the read: a write landing in between leaves a
   * stale stamp with the newer hash, so the next call hashes again rather
   * than keeping an old hash under a new stamp.
   */
  async hash(file: string): Promise<string | null> {
    let stamp: string;
    let settled: boolean;
    try {
      const st = await fs.stat(file, { bigint: true });
      if (!st.isFile()) return this.forget(file);
      stamp = `${st.mtimeNs}:${st.ctimeNs}:${st.size}:${st.ino}`;
      const now = BigInt(Date.now()) * 1_000_000n;
      settled = now - st.mtimeNs > SETTLED_NS && now - st.ctimeNs > SETTLED_NS;
    } catch {
      return this.forget(file);
    }
    const kept = this.kept.get(file);
    if (kept?.stamp === stamp) return kept.sha256;
    // In bounded memory, refusing a pipe or device swapped in since the stat (code-file-hash.ts).
    const hashed = await hashCodeFile(file);
    if (!hashed.ok) return this.forget(file);
    if (settled) this.kept.set(file, { stamp, sha256: hashed.sha256 });
    else this.kept.delete(file);
    return hashed.sha256;
  }

  private forget(file: string): null {
    this.kept.delete(file);
    return null;
  }
}

/** What a failed load said, and the module's hash when it failed. */
export interface LoadFailure {
  message: string;
  sha256: string | null;
}

/**
 * The status of a task's agent, for `getTask`.
 *
 * @param root the checkpoint directory, against which a relative project root resolves.
 * @param loadFailure what the last resume or approval of this task said when it could not load the module, if it could not;
 *   reported only while the module is the very file that failed (an edit may have fixed it).
 * @param format the format the task was read in: a task recording no agent may be one a built-in agent adopts.
 */
export async function taskAgentStatus(
  root: string,
  cp: Checkpoint,
  hashes: ModuleHashCache,
  loadFailure?: LoadFailure,
  format: TaskFormat = 'waystation',
): Promise<TaskAgentStatus> {
  const status = await agentStatus(root, cp, { hashModule: (file) => hashes.hash(file) });
  const ref = cp.agent;
  // With no agent recorded, a task a built-in agent recognises is handed to it on resume; one none does says why.
  const problem = status.kind === 'none' ? await unrecordedAgentProblem(root, cp, format, status.problem ?? '') : status.problem;
  const result: TaskAgentStatus = {
    name: ref?.name ?? null,
    origin: status.kind,
    available: status.available,
    ...(ref?.module ? { module: ref.module } : {}),
    ...(problem ? { problem } : {}),
    ...(status.module_changed ? { module_changed: true } : {}),
    ...(status.recorded_sha256 ? { recorded_sha256: status.recorded_sha256 } : {}),
    ...(status.current_sha256 ? { current_sha256: status.current_sha256 } : {}),
  };
  if (loadFailure && status.available && status.kind === 'module' && loadFailure.sha256 === (status.current_sha256 ?? null)) {
    result.load_problem = loadFailure.message;
  }
  return result;
}

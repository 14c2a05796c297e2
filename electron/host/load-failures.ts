/**
 * Why a task's agent module did not load at its last resume or approval
 * through this host, with the module's hash then.
 *
 * Only a load can tell that a module throws or exports no agent, and the task
 * view should keep saying so after the runner's message has scrolled by. A
 * pending entry is awaited, so a refresh prompted by the exit never misses
 * the failure that caused it.
 */
import type { CheckpointSource } from '../store/store-types.js';
import { moduleFileOf } from '../runtime/agent-loader.js';
import type { RunnerEvent } from './host-ports.js';
import type { LoadFailure, ModuleHashCache } from './task-agent-status.js';

/** The load failures of one open directory's tasks; see the module comment. */
export class LoadFailures {
  private readonly failures = new Map<string, Promise<LoadFailure | null>>();

  constructor(
    private readonly root: string,
    private readonly store: CheckpointSource,
    private readonly hashes: ModuleHashCache,
  ) {}

  /** Remember a refusal to load from a worker's exit, or forget the failure once a worker got past loading. */
  note(e: RunnerEvent): void {
    if (e.error === undefined) {
      this.failures.delete(e.taskId);
      return;
    }
    if (e.error !== 'agent-unavailable') return;
    const failure = this.store
      .getTask(e.taskId)
      .then(async (entry) => {
        const ref = entry?.checkpoint?.agent;
        const file = ref ? moduleFileOf(ref, this.root) : null;
        return file ? { message: e.detail, sha256: await this.hashes.hash(file) } : null;
      })
      .catch(() => null);
    this.failures.set(e.taskId, failure);
  }

  /** The last load failure of a task, once known; undefined when its last load worked or none failed. */
  async of(taskId: string): Promise<LoadFailure | undefined> {
    return (await this.failures.get(taskId)) ?? undefined;
  }
}

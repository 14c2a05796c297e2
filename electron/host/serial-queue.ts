/**
 * Work on one open directory, run one piece after the other: the watcher's
 * batches and the build of the task list share it, so events keep their order
 * and a change seen during a build is applied after the build, never
 * overwritten by it.
 */

/** A queue of asynchronous work that carries on past a failure. */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  /**
   * Run `work` after everything queued so far.
   *
   * The answer settles as `work` does; the queue itself moves on either way,
   * so one failed batch never holds back the next.
   */
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Resolves once everything queued so far has run. */
  idle(): Promise<void> {
    return this.tail;
  }
}

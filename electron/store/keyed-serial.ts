/**
 * Calls for one task in one store, run one after the other: a save must not
 * read the version another save of the same task is about to write. Calls for
 * other tasks are not held back, and a failed call never holds back the next.
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Run `fn` after every earlier call for `key` has settled; the answer settles as `fn` does. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => {});
    this.tails.set(key, tail);
    // Forgotten once idle, so a store that saw many tasks holds nothing for them.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }
}

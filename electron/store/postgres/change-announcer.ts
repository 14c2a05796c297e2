/**
 * How one store's committed changes are announced: at most one announcement
 * under way, and at most one begun every ANNOUNCE_EVERY_MS.
 *
 * Each announcement is a statement of its own on the server (a transaction
 * holding only NOTIFY, pg-connection.ts), and a runner saving back to back
 * sent one per save: its processing took a fifth of every save's time on the
 * server's cores. Announcements are therefore coalesced. A change with none
 * begun in the last ANNOUNCE_EVERY_MS goes out at once, so a lone save is
 * seen as soon as before; changes that follow within that time wait for its
 * end and go out together, each task named once. A subscriber reads events
 * from the table after the last id it delivered (pg-events.ts), so one
 * notification naming a task covers every save of it before; nothing is
 * skipped or delivered twice whatever the grouping.
 */

/**
 * The shortest time between the starts of two announcements of one store, in
 * ms: the longest a change waits for its notification beyond the send itself
 * (the live-update target is 250 ms at the 95th percentile).
 */
export const ANNOUNCE_EVERY_MS = 10;

/** Sends one announcement naming `taskIds`; best effort, so it never rejects. */
export type SendAnnouncement = (taskIds: readonly string[]) => Promise<void>;

export class ChangeAnnouncer {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private lastStart = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly send: SendAnnouncement,
    private readonly everyMs = ANNOUNCE_EVERY_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Announce changes of `taskIds`: now, or with the changes that follow within the interval. */
  add(taskIds: readonly string[]): void {
    for (const id of taskIds) this.pending.add(id);
    this.schedule();
  }

  /** Send what is waiting at once and wait for every announcement under way (the store is closing). */
  async flush(): Promise<void> {
    for (;;) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      if (this.sending) await this.sending;
      else if (this.pending.size > 0) this.start();
      else return;
    }
  }

  private schedule(): void {
    if (this.pending.size === 0 || this.timer || this.sending) return;
    const wait = this.lastStart + this.everyMs - this.now();
    if (wait <= 0) {
      this.start();
      return;
    }
    // Not unref'd: a process that ends on its own sends what is waiting first (a few ms at most).
    this.timer = setTimeout(() => {
      this.timer = null;
      this.schedule();
    }, wait);
  }

  private start(): void {
    const ids = [...this.pending];
    this.pending.clear();
    this.lastStart = this.now();
    this.sending = this.send(ids)
      .catch(() => undefined)
      .finally(() => {
        this.sending = null;
        this.schedule();
      });
  }
}

/**
 * The host's live event stream: one numbering across the whole host, a replay
 * ring so a client that reconnects with the last id it saw misses nothing, and
 * `resync` when it asks for events the ring no longer holds.
 */
import type { HostEvent, HostEventInput, HostEventListener } from '../../shared/api/contract.js';

export interface EventHubOptions {
  /** How many recent events are kept for replay. */
  capacity?: number;
}

/**
 * Numbers, keeps and fans out host events.
 *
 * Replay and registration happen in one synchronous step, so an event
 * published while a subscriber catches up can neither be missed nor be
 * delivered twice.
 */
export class EventHub {
  private readonly capacity: number;
  private readonly ring: HostEvent[] = [];
  private readonly listeners = new Set<HostEventListener>();
  private lastId = 0;

  constructor(options: EventHubOptions = {}) {
    this.capacity = Math.max(1, options.capacity ?? 10_000);
  }

  /** The id of the newest event, 0 before the first. */
  get latestId(): number {
    return this.lastId;
  }

  /** Number of live subscribers (for tests and diagnostics). */
  get subscriberCount(): number {
    return this.listeners.size;
  }

  /** Give an event the next id, keep it for replay and deliver it to every subscriber. */
  publish(input: HostEventInput): HostEvent {
    const event = { ...input, id: ++this.lastId } as HostEvent;
    this.ring.push(event);
    if (this.ring.length > this.capacity) this.ring.splice(0, this.ring.length - this.capacity);
    for (const listener of [...this.listeners]) this.deliver(listener, event);
    return event;
  }

  /**
   * Subscribe to events after `lastEventId`.
   *
   * Without `lastEventId` only events published from now on are delivered.
   * With it, every kept event with a larger id is replayed first. When the ring
   * no longer reaches back that far, or the id is one this hub never issued
   * (the client saw an earlier host), the subscriber first gets a `resync`
   * numbered with the latest id, then everything after it.
   */
  subscribe(listener: HostEventListener, lastEventId?: number): () => void {
    if (lastEventId !== undefined && Number.isFinite(lastEventId)) {
      const oldestKept = this.ring.length ? this.ring[0].id : this.lastId + 1;
      if (lastEventId > this.lastId) {
        this.deliver(listener, {
          id: this.lastId,
          type: 'resync',
          reason: `event ${lastEventId} was not issued by this host; reload everything`,
        });
      } else if (lastEventId < oldestKept - 1) {
        this.deliver(listener, {
          id: this.lastId,
          type: 'resync',
          reason: `events after ${lastEventId} are no longer kept (oldest kept: ${oldestKept}); reload everything`,
        });
      } else {
        // A listener may itself publish while catching up; loop until nothing is left behind.
        let cursor = lastEventId;
        while (cursor < this.lastId) {
          for (const event of this.eventsAfter(cursor)) {
            cursor = event.id;
            this.deliver(listener, event);
          }
        }
      }
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Drop every subscriber (on shutdown). */
  clear(): void {
    this.listeners.clear();
  }

  private eventsAfter(id: number): HostEvent[] {
    // Ids in the ring are consecutive, so the start index is arithmetic.
    if (!this.ring.length) return [];
    const start = Math.max(0, id + 1 - this.ring[0].id);
    return this.ring.slice(start);
  }

  private deliver(listener: HostEventListener, event: HostEvent): void {
    try {
      listener(event);
    } catch {
      // One failing subscriber (a closed socket, a destroyed window) must not starve the others.
    }
  }
}

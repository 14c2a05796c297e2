/**
 * Going on with a task's event log from the last event a reader holds.
 *
 * A reader asks for the events from the one it holds on (those after the id
 * before it), and goes on only while the log still holds that event as it was:
 * a task removed and written anew under its name has a log of its own, whose
 * ids start at 1 again, and its events are not the ones after those held. The
 * host's change feed and the inspector's Events tab both follow a log this way.
 */

/** What a reader holds of the last event it took: its id, and its time and type where it read them. */
export interface HeldEvent {
  id: number;
  at?: string;
  type?: string;
}

/** The id to ask for the events after: the one before the event held, so that it comes back first. */
export function askAfter(held: HeldEvent): number {
  return held.id - 1;
}

/**
 * The events after `held`, from `events` as the log answered `askAfter(held)`; null when the log no longer starts
 * there with the event held, as it was, and the reader must read it whole.
 */
export function eventsAfterHeld<E extends { id: number; at: string; type: string }>(held: HeldEvent, events: readonly E[]): E[] | null {
  const first = events[0];
  if (!first || first.id !== held.id) return null;
  if ((held.at !== undefined && first.at !== held.at) || (held.type !== undefined && first.type !== held.type)) return null;
  return events.slice(1);
}

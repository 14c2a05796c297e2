/**
 * The open task's conversation and event log: read on demand, the messages
 * of the version shown and the events after the last one held.
 */
import { askAfter, eventsAfterHeld } from '../../../shared/api/events-after.js';
import type { EventsState, MessagesState, Slice, TaskFeedSlice } from './store-types.js';
import { errorText } from './error-text.js';

const NO_EVENTS: EventsState = { state: 'idle', taskId: null, items: [], skipped: 0, error: null };
const NO_MESSAGES: MessagesState = { state: 'idle', taskId: null, version: null, head: null, items: [], error: null, following: null };

/** The messages and events of the open task. */
export const createTaskFeedSlice: Slice<TaskFeedSlice> = (set, get) => {
  // Answers for a task or version the user has since left are dropped, so a slow response never paints the wrong one.
  let messagesSeq = 0;
  let eventsSeq = 0;
  // One read at a time: a burst of live events becomes one more read after the current one.
  let eventsInFlight: Promise<void> | null = null;
  let eventsAgain = false;

  return {
    messages: NO_MESSAGES,
    events: NO_EVENTS,

    clearMessages() {
      messagesSeq++;
      set({ messages: NO_MESSAGES });
    },

    clearFeeds() {
      messagesSeq++;
      eventsSeq++;
      set({ messages: NO_MESSAGES, events: NO_EVENTS });
    },

    async loadMessages() {
      const taskId = get().selectedTaskId;
      const detail = get().detail;
      const version = detail?.version ?? null;
      if (!taskId || version === null) return;
      const current = get().messages;
      const head = detail?.checkpoint?.history?.head ?? null;
      // Held already: the same version of the same history. A task folder made anew under the id may be at the same
      // version with another conversation; its history's head tells them apart.
      const held = (current.version === version && current.head === head) || current.following === version;
      if (current.taskId === taskId && current.state !== 'error' && held) return;
      // A task running on: the messages shown stay on screen, and only those appended since are fetched.
      const continues = current.state === 'ready' && current.taskId === taskId && current.version !== null && version > current.version;
      const mine = ++messagesSeq;
      if (continues) set({ messages: { ...current, following: version } });
      else set({ messages: { state: 'loading', taskId, version, head, items: [], error: null, following: null } });
      try {
        const answer = await get().api.getMessages(
          continues ? { taskId, version, after: { head: current.head, count: current.items.length } } : { taskId, version },
        );
        if (mine !== messagesSeq) return;
        // The host answers from the caller's count when the new history continues the one shown, else from 0.
        const items =
          answer.from > 0 && answer.from <= current.items.length
            ? [...current.items.slice(0, answer.from), ...answer.messages]
            : answer.messages;
        set({ messages: { state: 'ready', taskId, version, head, items, error: null, following: null } });
      } catch (err) {
        if (mine === messagesSeq)
          set({ messages: { state: 'error', taskId, version, head, items: [], error: errorText(err), following: null } });
      }
    },

    async loadEvents() {
      if (eventsInFlight) {
        eventsAgain = true;
        return eventsInFlight;
      }
      const run = async () => {
        const taskId = get().selectedTaskId;
        if (!taskId) return;
        const current = get().events;
        const held = current.taskId === taskId && current.state === 'ready' ? current : null;
        // The last event held is asked for again: the log goes on from it only while it still holds it as it was.
        const last = held?.items.at(-1);
        const mine = ++eventsSeq;
        if (!held) set({ events: { ...NO_EVENTS, state: 'loading', taskId } });
        try {
          const answer = await get().api.getEvents({ taskId, after: last ? askAfter(last) : 0 });
          if (mine !== eventsSeq || get().selectedTaskId !== taskId) return;
          const fresh = last ? eventsAfterHeld(last, answer.events) : answer.events;
          // Another log (a task folder made anew, whose ids start at 1 again), or one too far on to be sent whole: read it whole.
          if (!fresh) {
            set({ events: { ...NO_EVENTS, taskId } });
            eventsAgain = true;
            return;
          }
          const items = held ? [...held.items, ...fresh] : fresh;
          set({ events: { state: 'ready', taskId, items, skipped: (held?.skipped ?? 0) + answer.skipped, error: null } });
        } catch (err) {
          if (mine === eventsSeq && get().selectedTaskId === taskId)
            set({ events: { ...NO_EVENTS, state: 'error', taskId, error: errorText(err) } });
        }
      };
      eventsInFlight = (async () => {
        do {
          eventsAgain = false;
          await run();
        } while (eventsAgain);
      })().finally(() => {
        eventsInFlight = null;
      });
      return eventsInFlight;
    },
  };
};

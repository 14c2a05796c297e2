/**
 * The task's conversation history at the version shown: every message with
 * its role, long ones collapsed to a few lines, the list virtualised so a
 * history of thousands of messages scrolls like a short one.
 */
import { useEffect, useRef, useState, type CSSProperties } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useShallow } from 'zustand/react/shallow';
import type { HistoryMessage } from '../../../shared/checkpoint/schema.js';
import { useAppStore } from '../store/app-store.js';

/** Messages longer than this (characters or lines) start collapsed. */
export const COLLAPSE_CHARS = 600;
export const COLLAPSE_LINES = 8;
/** Below this many messages the list is drawn whole: simpler for find-in-page and screen readers. */
const VIRTUAL_FROM = 200;

/** Whether a message is long enough to start collapsed. */
export function isLong(content: string): boolean {
  return content.length > COLLAPSE_CHARS || content.split('\n').length > COLLAPSE_LINES;
}

export function MessagesTab() {
  const { messages, taskId, version, head } = useAppStore(
    useShallow((s) => ({
      messages: s.messages,
      taskId: s.selectedTaskId,
      version: s.detail?.version ?? null,
      head: s.detail?.checkpoint?.history?.head ?? null,
    })),
  );
  const loadMessages = useAppStore((s) => s.loadMessages);
  // The history's head too: a task folder made anew under the id may stand at the same version with other messages.
  useEffect(() => {
    void loadMessages();
  }, [loadMessages, taskId, version, head]);

  // While a later version's new messages are fetched, the ones already shown stay, with the version they belong to.
  const current = messages.taskId === taskId && (messages.version === version || messages.following === version);
  if (!current || messages.state === 'loading' || messages.state === 'idle') {
    return (
      <p role="status" className="muted">
        <span className="spinner" aria-hidden="true" /> Loading messages…
      </p>
    );
  }
  if (messages.state === 'error') {
    return (
      <p role="alert" className="error-text">
        Could not load the messages: {messages.error}
      </p>
    );
  }
  if (messages.items.length === 0) {
    return (
      <p className="empty-inline">
        No messages at version {messages.version}: the agent has not talked to a model yet, or keeps no history.
      </p>
    );
  }
  return (
    <div className="messages">
      <p className="muted small">
        {messages.items.length} message{messages.items.length === 1 ? '' : 's'} at version {messages.version}, oldest first.
      </p>
      {messages.items.length < VIRTUAL_FROM ? (
        <ol className="message-list" aria-label="Messages">
          {messages.items.map((m, i) => (
            <MessageItem key={i} message={m} index={i} total={messages.items.length} />
          ))}
        </ol>
      ) : (
        <VirtualMessages items={messages.items} />
      )}
    </div>
  );
}

function VirtualMessages({ items }: { items: HistoryMessage[] }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  // The virtualizer's API is not memoisable by the compiler; it is only read, never passed down.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 96,
    overscan: 8,
  });
  return (
    <div ref={scrollRef} className="message-scroll">
      <ol className="message-list" aria-label="Messages" style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((row) => (
          <MessageItem
            key={row.index}
            message={items[row.index]}
            index={row.index}
            total={items.length}
            measureRef={virtualizer.measureElement}
            style={{ position: 'absolute', top: 0, left: 0, right: 0, transform: `translateY(${row.start}px)` }}
          />
        ))}
      </ol>
    </div>
  );
}

interface MessageItemProps {
  message: HistoryMessage;
  index: number;
  total: number;
  measureRef?: (el: Element | null) => void;
  style?: CSSProperties;
}

function MessageItem({ message, index, total, measureRef, style }: MessageItemProps) {
  const long = isLong(message.content);
  const [open, setOpen] = useState(false);
  const role = message.role || 'unknown';
  const id = `message-${index}`;
  return (
    <li
      ref={measureRef}
      data-index={index}
      className={`message message-${role.replace(/[^a-z]/gi, '')}`}
      style={style}
      aria-posinset={index + 1}
      aria-setsize={total}
      aria-labelledby={`${id}-role`}
    >
      <div className="message-head">
        <span id={`${id}-role`} className="message-role">
          {role}
        </span>
        <span className="muted small">#{index + 1}</span>
        {long && (
          <button type="button" className="link small" aria-expanded={open} aria-controls={`${id}-body`} onClick={() => setOpen(!open)}>
            {open ? 'Collapse' : `Show all (${message.content.length.toLocaleString()} characters)`}
          </button>
        )}
      </div>
      <pre id={`${id}-body`} className={`message-body${long && !open ? ' collapsed' : ''}`}>
        {message.content}
      </pre>
    </li>
  );
}

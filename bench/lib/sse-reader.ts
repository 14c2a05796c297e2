/**
 * The client side of Server-Sent Events, for the benchmarks and tests that
 * watch the loopback host's event stream without a browser's EventSource.
 */

/** One message of the stream: its `id:` line, if any, and its `data:` lines joined. */
export interface SseMessage {
  id: string | undefined;
  data: string;
}

/**
 * A reader fed the stream's text chunk by chunk; it calls `onMessage` for each complete message with data.
 *
 * Chunks may split a message anywhere: the tail is kept until the blank line
 * that ends it arrives. Comments (keep-alives) carry no data and are skipped.
 */
export function sseReader(onMessage: (message: SseMessage) => void): (chunk: string) => void {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const lines = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
      if (data) onMessage({ id, data });
    }
  };
}

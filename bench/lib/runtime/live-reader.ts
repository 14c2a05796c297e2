/**
 * The reader beside a running task, in a process of its own as an
 * inspector's host is: its store kept open, it holds the messages it read and
 * asks for the latest checkpoint and that version's messages after those it
 * holds, as a host asks for the messages of the version it shows.
 *
 * Run: node bin/waystation-tsx.mjs bench/lib/runtime/live-reader.ts ROOT TASK
 * (the runtime bench starts it with startBenchChild). Prints
 * `{"type":"ready"}`, then answers each `read` line on stdin with
 * `{"type":"read","ms":...,"version":...,"messages":...}`: the time of
 * getTask and readHistoryAfter together, measured here, so the trip between
 * the processes is not in it.
 */
import readline from 'node:readline';
import { openStore } from '../../../electron/runtime/index.js';
import type { HistoryMark } from '../../../electron/store/store-types.js';
import type { HistoryMessage } from '../../../shared/checkpoint/schema.js';
import { msSince, nowNs } from '../timing.js';

const [root, taskId] = process.argv.slice(2);
if (!root || !taskId) {
  console.error('usage: live-reader.ts ROOT TASK');
  process.exit(2);
}
const store = openStore(root);
const messages: HistoryMessage[] = [];
let mark: HistoryMark | undefined;

async function read(): Promise<{ ms: number; version: number }> {
  const start = nowNs();
  const entry = await store.getTask(taskId);
  if (!entry?.checkpoint) throw new Error(`found no readable checkpoint of ${taskId} in ${root}`);
  // The messages of the version read, as a host asks for those of the version it shows (task-feed-slice.ts).
  const tail = await store.readHistoryAfter(taskId, entry.checkpoint.version, mark);
  messages.length = tail.from;
  for (const m of tail.messages) messages.push(m);
  const ms = msSince(start);
  const { version, history } = entry.checkpoint;
  // Saved between the two reads, the task would show a version beside another version's messages: said, not measured.
  if (messages.length !== history.count) throw new Error(`holding ${messages.length} messages; version ${version} has ${history.count}`);
  mark = { head: history.head, count: history.count };
  return { ms, version };
}

process.stdout.write(`${JSON.stringify({ type: 'ready' })}\n`);
// One read at a time, in the order asked; a read that fails ends the reader, and the bench hears why.
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line.trim() !== 'read') continue;
  try {
    process.stdout.write(`${JSON.stringify({ type: 'read', ...(await read()), messages: messages.length })}\n`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}

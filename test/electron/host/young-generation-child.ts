/**
 * Child of host-heap.test.ts: allocates as a host building its list does (much
 * of it surviving, in pieces with a turn of the event loop between them) and
 * prints the young generation's largest size as JSON. `hold` as its argument
 * holds the heap first, as a host does when it starts.
 */
import { setTimeout as turn } from 'node:timers/promises';
import { holdHostHeapGrowth, youngGenerationBytes } from '../../../electron/host/host-heap.js';

if (process.argv[2] === 'hold') holdHostHeapGrowth();
const kept: object[] = [];
let largest = youngGenerationBytes();
for (let piece = 0; piece < 60; piece++) {
  for (let i = 0; i < 25_000; i++) kept.push({ id: `task-${piece}-${i}`, step: i, done: i % 2 === 0 });
  // A whole turn, through a timer: Node reports a collection to its observers from the check phase of a turn after it.
  await turn(0);
  largest = Math.max(largest, youngGenerationBytes());
}
process.stdout.write(`${JSON.stringify({ largest, kept: kept.length })}\n`);

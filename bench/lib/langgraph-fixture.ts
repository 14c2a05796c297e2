/**
 * The LangGraph bench's SQLite file: `threads` threads of the tool-calling
 * agent, each asked `questionsPerThread` questions by real LangGraph with its
 * SqliteSaver, five checkpoints a question (100 threads x 20 questions =
 * 10,000 checkpoints, up to 80 messages each). Written once and kept under
 * the OS temp folder, keyed by its shape.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HumanMessage } from '@langchain/core/messages';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { weatherAgent } from '../../test/support/langgraph-graphs.js';

const CITIES = ['Paris', 'Oslo', 'Rome', 'Lima', 'Quito', 'Cairo', 'Tokyo', 'Perth', 'Dakar', 'Sofia'];

export interface LangGraphFixture {
  file: string;
  threads: number;
  checkpoints: number;
  bytes: number;
}

/** The thread id of thread `i`. */
export const benchThreadId = (i: number) => `thread-${String(i).padStart(4, '0')}`;

/** The fixture file, written by real LangGraph when it is not there yet. */
export async function ensureLangGraphFixture(
  threads: number,
  questionsPerThread: number,
  log: (line: string) => void,
): Promise<LangGraphFixture> {
  const dir = path.join(os.tmpdir(), 'waystation-bench-langgraph');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `threads-${threads}-questions-${questionsPerThread}.sqlite`);
  if (!fs.existsSync(file)) {
    const partial = `${file}.partial`;
    fs.rmSync(partial, { force: true });
    const saver = SqliteSaver.fromConnString(partial);
    const agent = weatherAgent(saver);
    log(`writing ${threads} LangGraph threads of ${questionsPerThread} questions to ${file} (once)...`);
    for (let t = 0; t < threads; t++) {
      for (let q = 0; q < questionsPerThread; q++) {
        await agent.invoke(
          { messages: [new HumanMessage(`What is the weather in ${CITIES[(t + q) % CITIES.length]}?`)] },
          { configurable: { thread_id: benchThreadId(t) } },
        );
      }
    }
    (saver as unknown as { db: { pragma(s: string): unknown; close(): void } }).db.pragma('wal_checkpoint(TRUNCATE)');
    (saver as unknown as { db: { close(): void } }).db.close();
    fs.renameSync(partial, file);
  }
  return { file, threads, checkpoints: threads * questionsPerThread * 5, bytes: fs.statSync(file).size };
}

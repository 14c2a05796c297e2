/**
 * LangGraph SQLite checkpointer files for tests, written by real LangGraph
 * (SqliteSaver running the graphs of langgraph-graphs.ts), and a fingerprint
 * of such a file with its `-wal` and `-shm`, to prove a reader changed none
 * of their bytes.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { populate } from './langgraph-graphs.js';

/** The saver's own database handle, to close it: SqliteSaver has no close of its own. */
export function closeSaver(saver: SqliteSaver): void {
  (saver as unknown as { db: { close(): void } }).db.close();
}

/** A temporary folder with `checkpoints.sqlite` holding the whole scenario of langgraph-graphs.ts. */
export async function scenarioDatabase(): Promise<{ dir: string; file: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-langgraph-'));
  const file = path.join(dir, 'checkpoints.sqlite');
  const saver = SqliteSaver.fromConnString(file);
  await populate(saver);
  closeSaver(saver);
  return { dir, file };
}

/** SHA-256 of the file and of its `-wal` and `-shm` (or "absent"): equal fingerprints mean not a byte changed. */
export function fingerprint(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const suffix of ['', '-wal', '-shm']) {
    const p = `${file}${suffix}`;
    out[suffix || 'db'] = fs.existsSync(p) ? crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex') : 'absent';
  }
  return out;
}

/**
 * A LangGraph SQLite file that another process is writing to, holds locked,
 * or left mid-transaction when it died: read as its last commit, or reported
 * as locked (naming the file), never misread, never waited on for long, and
 * never written to (not a byte of the file or of its journal, `-wal` or
 * `-shm`, and no file created beside it).
 *
 * The other process is Python's sqlite3 module, as any writer of the file
 * would be; the file itself is written by real LangGraph (SqliteSaver).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { detectLocation } from '../../../../electron/sources/detect-location.js';
import { BUSY_TIMEOUT_MS } from '../../../../electron/sources/langgraph/sqlite-open.js';
import { THREADS } from '../../../support/langgraph-graphs.js';
import { scenarioDatabase } from '../../../support/langgraph-sqlite.js';
import { captureCli } from '../../cli/capture-cli.js';

let dir: string;
let pristine: string;
const holders: ChildProcess[] = [];

beforeAll(async () => {
  ({ dir, file: pristine } = await scenarioDatabase());
  // The CLI's modules loaded once, so the times below are the reads'.
  await captureCli('ls', pristine);
});

afterEach(() => {
  for (const p of holders.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const COMPANIONS = ['', '-journal', '-wal', '-shm'];

/** SHA-256 of the file and of each companion (or "absent"). */
function everyByte(file: string): Record<string, string> {
  return Object.fromEntries(
    COMPANIONS.map((s) => [
      s || 'db',
      fs.existsSync(`${file}${s}`)
        ? crypto
            .createHash('sha256')
            .update(fs.readFileSync(`${file}${s}`))
            .digest('hex')
        : 'absent',
    ]),
  );
}

/** A copy of the scenario file, in the journal mode given (set by Python, as a user's tool would). */
function copyIn(name: string, journalMode: 'wal' | 'delete'): string {
  const file = path.join(dir, name);
  fs.copyFileSync(pristine, file);
  execFileSync('python3', [
    '-c',
    `import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA journal_mode=${journalMode}"); c.close()`,
    file,
  ]);
  return file;
}

/** A row of `checkpoints` for a new thread, copied from an existing one. */
const copyThread = (thread: string) =>
  `INSERT INTO checkpoints SELECT '${thread}', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = '${THREADS.weather}'`;

/** Run Python `code` against `file` as `db`, in a process that keeps running (holding whatever it holds) once it printed "ready". */
async function hold(file: string, code: string): Promise<ChildProcess> {
  const child = spawn(
    'python3',
    [
      '-c',
      `import sqlite3, sys, time, os\ndb = sqlite3.connect(sys.argv[1], isolation_level=None)\n${code}\nprint("ready", flush=True)\ntime.sleep(120)`,
      file,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  holders.push(child);
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`python exited ${code}: ${err}`)));
  });
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const start = Date.now();
  const result = await run();
  return { ms: Date.now() - start, result };
}

describe('a LangGraph SQLite file in WAL mode held by a writer in locking_mode=EXCLUSIVE', () => {
  it('is read as of its last commit, at once, without its lock and without creating the -shm that writer does not use', async () => {
    const file = copyIn('lockwal.sqlite', 'wal');
    const writer = await hold(
      file,
      `db.execute("PRAGMA locking_mode=EXCLUSIVE")\ndb.execute("BEGIN")\ndb.execute("${copyThread('committed')}")\ndb.execute("COMMIT")\ndb.execute("BEGIN")\ndb.execute("${copyThread('not-committed')}")`,
    );
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    const before = everyByte(file);
    const { ms, result } = await timed(() => captureCli('ls', file));
    expect([result.code, result.err]).toEqual([0, '']);
    expect(result.out).toMatch(/^committed\s+done/m);
    expect(result.out).not.toContain('not-committed');
    expect(result.out).toContain('6 tasks');
    // Not waited for its lock (which SQLite would wait 5 s for, and then fail).
    expect(ms).toBeLessThan(4 * BUSY_TIMEOUT_MS);
    expect(everyByte(file)).toEqual(before);
    expect(before['-shm']).toBe('absent');

    // Its writer gone (killed, its -wal left behind): the same.
    await killed(writer);
    const after = everyByte(file);
    const again = await captureCli('ls', file);
    expect([again.code, again.err]).toEqual([0, '']);
    expect(again.out).toMatch(/^committed\s+done/m);
    expect(everyByte(file)).toEqual(after);
  });
});

describe('a LangGraph SQLite file in rollback-journal mode, in the middle of a large exclusive transaction', () => {
  // A thread added, one deleted, then enough rows through a small cache that SQLite spills the changed pages to the
  // file itself, their originals in its -journal: the file's own bytes are half of a transaction.
  const spill =
    `db.execute("PRAGMA cache_size=10")\ndb.execute("BEGIN EXCLUSIVE")\ndb.execute("${copyThread('not-committed')}")\n` +
    `db.execute("DELETE FROM checkpoints WHERE thread_id = '${THREADS.weather}'")\n` +
    `for i in range(2000): db.execute("INSERT INTO writes VALUES ('spill', '', ?, 't', 0, 'c', 'bytes', ?)", (f"id{i}", os.urandom(4000)))`;

  it('is reported locked by another process, naming the file, after a short wait; nothing of it is read or changed', async () => {
    const file = copyIn('spill.sqlite', 'delete');
    await hold(file, spill);
    expect(fs.existsSync(`${file}-journal`)).toBe(true);
    const before = everyByte(file);
    // Detection still knows it for a LangGraph file.
    expect(await detectLocation(file)).toEqual({ kind: 'langgraph-sqlite', file });
    const { ms, result } = await timed(() => captureCli('ls', file));
    expect(result.code).toBe(1);
    expect(result.err).toContain(`${file} is locked by another process`);
    expect(result.err).toContain('try again once that process has committed or closed the file');
    expect(ms).toBeLessThan(3 * BUSY_TIMEOUT_MS + 1000);
    expect(everyByte(file)).toEqual(before);
  });

  it('is read as it was before that transaction once its writer died, its hot journal rolled back in a private copy, not in the file', async () => {
    const file = copyIn('spill-dead.sqlite', 'delete');
    const writer = await hold(file, spill);
    await killed(writer);
    expect(fs.existsSync(`${file}-journal`)).toBe(true);
    const before = everyByte(file);
    const { code, out, err } = await captureCli('ls', file);
    expect([code, err]).toEqual([0, '']);
    expect(out).toContain('5 tasks');
    expect(out).not.toContain('not-committed');
    expect(out).toMatch(new RegExp(`^${THREADS.weather}\\s+done`, 'm'));
    expect(out).toMatch(new RegExp(`${THREADS.waiting}\\s+waiting_human`));
    const show = await captureCli('show', file, THREADS.weather);
    expect(show.code).toBe(0);
    // The file and its journal are as the dead writer left them: its next writer rolls the journal back.
    expect(everyByte(file)).toEqual(before);
  });
});

describe('an error reading a LangGraph SQLite file', () => {
  it('names the file', async () => {
    const file = copyIn('broken.sqlite', 'delete');
    // The last page (rows of the tables, not the schema on page 1) overwritten with noise.
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, crypto.randomBytes(4096), 0, 4096, size - 4096);
    fs.closeSync(fd);
    const { code, err } = await captureCli('ls', file);
    expect(code).toBe(1);
    expect(err).toContain(`${file} cannot be read as SQLite: database disk image is malformed`);
  });
});

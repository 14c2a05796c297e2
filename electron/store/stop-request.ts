/**
 * Stopping a running task from another process: a person's request, bound
 * to the holding of the lease it is meant for, which the holder checks at
 * every safe boundary (before a step starts, before an effect's intent is
 * recorded). A directory keeps it beside the lease entry of that run
 * (`lease/<n>.stop.json`, here); a database in the lease row
 * (postgres/pg-lease.ts). Both keep the same fields.
 *
 * Bound to one lease entry so that it stops exactly that run: a later run
 * takes entry n+2 or higher and never sees it. The file is written whole
 * (temp file and rename), so the holder reads a request or none.
 *
 * A request is a few hundred bytes; a file far larger (or a pipe, a device, a
 * link in its place) is not one Waystation wrote, and is never read whole nor
 * waited on: it still counts as a request, since stopping is the safe reading
 * of it, and says in its `problem` why it was not read.
 */
import path from 'node:path';
import { commitReplace, writeTemp } from './atomic-file.js';
import { errorCode, nodeFs } from './store-fs.js';

/** The most of a stored stop request that is read: a request Waystation writes is a few hundred bytes. */
export const STOP_REQUEST_MAX_BYTES = 64 * 1024;

/** Who asked a run to stop, when and why. */
export interface StopRequest {
  by: string;
  at: string;
  reason?: string;
  /** How many times it was asked: a second request means "end the process now". */
  count: number;
  /** Why the stored request could not be read (too large, not a file): it is honoured all the same. */
  problem?: string;
}

function requestPath(leaseDir: string, n: number): string {
  return path.join(leaseDir, `${n}.stop.json`);
}

/** A request that could not be read: still a request, saying why (`reason` carries it into the saved stop). */
function unreadableRequest(problem: string): StopRequest {
  return { by: 'someone', at: new Date(0).toISOString(), reason: problem, count: 1, problem };
}

/** A stored request's text as a StopRequest; null for none. `where` names it in a problem. */
export function parseStopRequest(text: string | null, where = 'the stop request'): StopRequest | null {
  if (text === null) return null;
  if (text.length > STOP_REQUEST_MAX_BYTES) {
    return unreadableRequest(
      `${where} is ${text.length} characters, more than the ${STOP_REQUEST_MAX_BYTES} a stop request holds; it was not read`,
    );
  }
  try {
    const parsed = JSON.parse(text) as Partial<StopRequest>;
    return {
      by: typeof parsed.by === 'string' ? parsed.by : 'someone',
      at: typeof parsed.at === 'string' ? parsed.at : new Date(0).toISOString(),
      ...(typeof parsed.reason === 'string' ? { reason: parsed.reason } : {}),
      count: typeof parsed.count === 'number' && parsed.count > 0 ? parsed.count : 1,
    };
  } catch {
    // A request that cannot be read is still a request: stopping is the safe reading of it.
    return { by: 'someone', at: new Date(0).toISOString(), count: 1 };
  }
}

/** The request to store when `req` asks again after `before` (its count says how often it was asked). */
export function nextStopRequest(before: StopRequest | null, req: { by: string; reason?: string }): StopRequest {
  return {
    by: req.by,
    at: new Date().toISOString(),
    ...(req.reason ? { reason: req.reason } : {}),
    count: (before?.count ?? 0) + 1,
  };
}

/**
 * The stop request for lease entry `n`, or null. Synchronous: it is one open on the runner's hot path.
 *
 * Opened without following a link and without waiting (a pipe opens at once, then is refused), and read only when
 * it is a regular file of at most STOP_REQUEST_MAX_BYTES.
 */
export function readStopRequest(leaseDir: string, n: number): StopRequest | null {
  const file = requestPath(leaseDir, n);
  const where = `the stop request ${path.join(path.basename(path.dirname(leaseDir)), 'lease', path.basename(file))}`;
  let read;
  try {
    read = nodeFs.syncReads!.readWholeFile(file, { maxBytes: STOP_REQUEST_MAX_BYTES, followLinks: false });
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    if (code === 'ELOOP') return unreadableRequest(`${where} is a symbolic link, which Waystation never writes; it was not followed`);
    return unreadableRequest(`${where} cannot be read (${code ?? String(err)})`);
  }
  if (!read.ok && read.reason === 'too-large') {
    return unreadableRequest(
      `${where} is ${read.size} bytes, more than the ${STOP_REQUEST_MAX_BYTES} a stop request holds; it was not read`,
    );
  }
  if (!read.ok) return unreadableRequest(`${where} is not a regular file (a folder, named pipe, socket or device); it was not read`);
  return parseStopRequest(read.bytes.toString('utf8'), where);
}

/**
 * Ask the holder of lease entry `n` to stop; returns the request as written
 * (its `count` says how often it was asked).
 */
export async function writeStopRequest(taskDir: string, n: number, req: { by: string; reason?: string }): Promise<StopRequest> {
  const leaseDir = path.join(taskDir, 'lease');
  const request = nextStopRequest(readStopRequest(leaseDir, n), req);
  const target = requestPath(leaseDir, n);
  await commitReplace(nodeFs, await writeTemp(nodeFs, target, JSON.stringify(request) + '\n'), target);
  return request;
}

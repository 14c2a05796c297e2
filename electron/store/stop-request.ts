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
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { commitReplace, writeTemp } from './atomic-file.js';
import { nodeFs } from './store-fs.js';

/** Who asked a run to stop, when and why. */
export interface StopRequest {
  by: string;
  at: string;
  reason?: string;
  /** How many times it was asked: a second request means "end the process now". */
  count: number;
}

function requestPath(leaseDir: string, n: number): string {
  return path.join(leaseDir, `${n}.stop.json`);
}

/** A stored request's text as a StopRequest; null for none. */
export function parseStopRequest(text: string | null): StopRequest | null {
  if (text === null) return null;
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

/** The stop request for lease entry `n`, or null. Synchronous: it is one stat on the runner's hot path. */
export function readStopRequest(leaseDir: string, n: number): StopRequest | null {
  const file = requestPath(leaseDir, n);
  if (!existsSync(file)) return null;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = '';
  }
  return parseStopRequest(text);
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

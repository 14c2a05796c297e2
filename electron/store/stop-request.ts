/**
 * Stopping a running task from another process: a person's request, left
 * beside the lease entry of the run it is meant for (`lease/<n>.stop.json`),
 * which the holder checks at every safe boundary (before a step starts,
 * before an effect's intent is recorded).
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

/** The stop request for lease entry `n`, or null. Synchronous: it is one stat on the runner's hot path. */
export function readStopRequest(leaseDir: string, n: number): StopRequest | null {
  const file = requestPath(leaseDir, n);
  if (!existsSync(file)) return null;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<StopRequest>;
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

/**
 * Ask the holder of lease entry `n` to stop; returns the request as written
 * (its `count` says how often it was asked).
 */
export async function writeStopRequest(taskDir: string, n: number, req: { by: string; reason?: string }): Promise<StopRequest> {
  const leaseDir = path.join(taskDir, 'lease');
  const before = readStopRequest(leaseDir, n);
  const request: StopRequest = {
    by: req.by,
    at: new Date().toISOString(),
    ...(req.reason ? { reason: req.reason } : {}),
    count: (before?.count ?? 0) + 1,
  };
  const target = requestPath(leaseDir, n);
  await commitReplace(nodeFs, await writeTemp(nodeFs, target, JSON.stringify(request) + '\n'), target);
  return request;
}

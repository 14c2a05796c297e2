/**
 * How a worker process gets its job: over its IPC channel, as its first
 * message. An environment variable or a command-line argument is limited in
 * size by the operating system (a few hundred KB of options made the spawn
 * fail with E2BIG), a message is not; the size of options is capped where
 * they enter instead (MAX_OPTIONS_BYTES).
 */
import type { ChildProcess } from 'node:child_process';

/** Set in a worker's environment when its job comes as the first IPC message. */
export const JOB_VIA_IPC_ENV = 'WAYSTATION_JOB_VIA_IPC';
/** The most an agent's options may weigh, serialised: far above any real form, far below what a process can carry. */
export const MAX_OPTIONS_BYTES = 256 * 1024;

/** Why a task's options are too large to start it with, or null. */
export function optionsTooLarge(options: unknown): string | null {
  const bytes = Buffer.byteLength(JSON.stringify(options ?? {}), 'utf8');
  if (bytes <= MAX_OPTIONS_BYTES) return null;
  return `the agent's options are ${bytes} bytes of JSON, over the ${MAX_OPTIONS_BYTES}-byte limit; pass large inputs as a file (an --input path) instead. Nothing was started`;
}

/**
 * Hand a forked worker its job (see the module comment), with the variables
 * it sets in its environment before it starts on it: a worker started before
 * its job was known (worker-standby.ts) could not be given them at its start.
 */
export function handJob(child: ChildProcess, job: unknown, env: Record<string, string> = {}): void {
  child.send({ type: 'job', job, env }, (err) => {
    // The worker died before it read its job: its exit is reported like any other.
    if (err) child.kill('SIGKILL');
  });
}

/** In the worker: its job as JSON text, from the environment or its first IPC message; null when it has none. */
export function receiveJob(): Promise<string | null> {
  if (process.env.WAYSTATION_JOB) return Promise.resolve(process.env.WAYSTATION_JOB);
  if (process.env[JOB_VIA_IPC_ENV] !== '1' || !process.send) return Promise.resolve(null);
  return new Promise((resolve) => {
    const onMessage = (m: unknown) => {
      const msg = m as { type?: unknown; job?: unknown; env?: unknown } | null;
      if (msg?.type !== 'job') return;
      process.off('message', onMessage);
      process.off('disconnect', onGone);
      if (msg.env && typeof msg.env === 'object') {
        for (const [key, value] of Object.entries(msg.env)) if (typeof value === 'string') process.env[key] = value;
      }
      resolve(JSON.stringify(msg.job));
    };
    const onGone = () => {
      process.off('message', onMessage);
      resolve(null);
    };
    process.on('message', onMessage);
    process.once('disconnect', onGone);
  });
}

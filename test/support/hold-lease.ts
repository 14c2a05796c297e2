/**
 * A process of its own that takes a task's lease and then never lets it go
 * nor heartbeats (test/electron/store/lease-holder.ts): a runner as another
 * process sees it, until the test kills it as a runner dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const HOLDER = path.join(import.meta.dirname, '../electron/store/lease-holder.ts');

/** Start the holder on `taskDir`; resolves once its lease is written. */
export async function holdLease(taskDir: string, env: NodeJS.ProcessEnv = process.env): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, taskDir], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => b.toString().includes('held') && resolve());
    child.once('exit', (code) => reject(new Error(`the lease holder exited early (${code})`)));
  });
  return child;
}

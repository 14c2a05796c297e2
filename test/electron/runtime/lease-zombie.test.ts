/**
 * A worker killed and not yet reaped is a zombie: it still answers signal 0,
 * but it runs nothing, so it holds no lease and a host opened then resumes
 * its task.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isZombie, pidAlive } from '../../../electron/store/lease-record.js';

/** Resolve once /proc shows `pid` in state Z (polled; no time limit of its own). */
async function untilZombie(pid: number): Promise<void> {
  for (;;) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.runIf(process.platform === 'linux')('a zombie process', () => {
  it('is not alive, though signal 0 still reaches it', async () => {
    // The shell starts a short child and becomes `sleep 30`, which never reaps it: the child stays a zombie.
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (b: Buffer) => resolve(b.toString().trim()))));
      await untilZombie(pid);
      expect(() => process.kill(pid, 0)).not.toThrow();
      expect(isZombie(pid)).toBe(true);
      expect(pidAlive(pid)).toBe(false);
      expect(pidAlive(parent.pid!)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

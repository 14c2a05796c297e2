/**
 * A process that takes a task's lease and then blocks its event loop, so it
 * cannot heartbeat: `tsx lease-holder.ts TASK_DIR`. It says `held` on stdout
 * once the lease is written, and spins until it is killed.
 */
import { acquireLease } from '../../../electron/store/file-lease.js';

const lease = await acquireLease(process.argv[2], 'blocked', { owner: 'blocked-holder' });
process.stdout.write(`held ${lease.n}\n`, () => {
  for (;;) {
    // A synchronous loop: no timer, no heartbeat, ever.
  }
});

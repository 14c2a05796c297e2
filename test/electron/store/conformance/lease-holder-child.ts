/**
 * A runner in another process for the lease tests: opens the store at
 * argv[2], takes the lease of task argv[3], prints its generation and waits
 * to be killed.
 */
import { openLocation } from '../../../../electron/store/open-location.js';

const [location, taskId] = process.argv.slice(2);
const lease = await openLocation(location).acquireLease(taskId, { owner: 'child', heartbeatMs: 0 });
process.stdout.write(`held ${lease.generation}\n`);
setInterval(() => undefined, 60_000);

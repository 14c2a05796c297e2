/**
 * The short version of the torture run's disk-faults scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { shortRun } from './lib/short-run.js';
import { diskFaults } from './scenarios/disk-faults.js';

shortRun('disk-faults', 'ENOSPC, EACCES and EIO give clear errors, leave the previous version intact, and the task resumes once they are gone', diskFaults, 45, 120_000);

/**
 * The short version of the torture run's hostile-requests scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { shortRun } from './lib/short-run.js';
import { hostileRequests } from './scenarios/hostile-requests.js';

shortRun('hostile-requests', 'hostile HTTP and IPC requests get no data and write nothing, and the host keeps serving', hostileRequests, 400, 60_000);

/**
 * The short version of the torture run's crash-kill scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { shortRun } from './lib/short-run.js';
import { crashKill } from './scenarios/crash-kill.js';

shortRun('crash-kill', 'SIGKILLed runners and workers, in every mode, resume with no step rerun, no double effect, no corrupt checkpoint and the uncrashed result', crashKill, 12, 180_000);

/**
 * The short version of the torture run's malformed-input scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { shortRun } from './lib/short-run.js';
import { malformedInput } from './scenarios/malformed-input.js';

shortRun('malformed-input', 'every reader answers a mutated task with a typed problem, never a crash or a hang, and changes no byte', malformedInput, 80, 120_000);

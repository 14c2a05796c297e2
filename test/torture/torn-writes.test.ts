/**
 * The short version of the torture run's torn-writes scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { shortRun } from './lib/short-run.js';
import { tornWrites } from './scenarios/torn-writes.js';

shortRun('torn-writes', 'a power cut at any write recovers to a written version, never before the last durable one, accounted for, and saves on', tornWrites, 120, 60_000);

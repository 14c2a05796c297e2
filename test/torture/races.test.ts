/**
 * The short version of the torture run's races scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { shortRun } from './lib/short-run.js';
import { races } from './scenarios/races.js';

shortRun('races', 'one runner drives a task, the others refuse clearly; reads while another process writes are whole; the host survives its directory moving', races, 20, 180_000);

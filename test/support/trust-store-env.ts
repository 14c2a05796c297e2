/**
 * Every test process keeps its directory trust in a file of its own, never
 * in the user's configuration folder: WAYSTATION_TRUST_FILE points to a
 * fresh temporary file, which the workers a test starts inherit.
 */
import os from 'node:os';
import path from 'node:path';

process.env.WAYSTATION_TRUST_FILE ??= path.join(os.tmpdir(), `waystation-trust-${process.pid}-${Date.now()}.json`);

/**
 * vitest global setup: names the folder that records the shared PostgreSQL
 * test cluster (postgres-cluster.ts), and at the end stops the cluster if a
 * test file started one. Nothing starts here: a run without database tests
 * pays nothing.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLUSTER_STATE_ENV, stopClusterSync, type ClusterInfo } from './postgres-cluster.js';

export default function setup(): () => void {
  const state = mkdtempSync(path.join(os.tmpdir(), 'waystation-pg-state-'));
  process.env[CLUSTER_STATE_ENV] = state;
  return () => {
    const record = path.join(state, 'cluster.json');
    if (existsSync(record)) stopClusterSync(JSON.parse(readFileSync(record, 'utf8')) as ClusterInfo);
    rmSync(state, { recursive: true, force: true });
  };
}

import pg from 'pg';
import { openPostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import { createDatabase } from '../../../support/postgres-cluster.js';
import { describeStoreConformance } from './store-conformance.js';

/** Every row of every Waystation table, as text keyed by table and row number. */
async function rows(url: string): Promise<Map<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const out = new Map<string, string>();
  try {
    for (const table of ['waystation_tasks', 'waystation_versions', 'waystation_blobs', 'waystation_events', 'waystation_leases']) {
      const { rows: found } = await client.query(`SELECT * FROM ${table}`);
      found.forEach((row: Record<string, unknown>, i) =>
        out.set(
          `${table}/${i}`,
          JSON.stringify(row, (_k, v: unknown) =>
            v instanceof Buffer || (v as { type?: string })?.type === 'Buffer' ? Buffer.from(v as Buffer).toString('utf8') : v,
          ),
        ),
      );
    }
  } finally {
    await client.end();
  }
  return out;
}

describeStoreConformance('the PostgreSQL store', async () => {
  const url = await createDatabase('conformance');
  return {
    open: () => openPostgresStore(url),
    location: url,
    footprint: () => rows(url),
    cleanup: async () => undefined,
  };
});

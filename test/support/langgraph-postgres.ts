/**
 * A throwaway PostgreSQL cluster for the LangGraph PostgreSQL tests: initdb
 * into a temporary folder as the `postgres` user, started with pg_ctl on a
 * random port of 127.0.0.1, trusted local connections only, removed at stop.
 * (Tests never mock the database.)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const BIN = '/usr/lib/postgresql/15/bin';

export interface PostgresCluster {
  /** A URL of the cluster's `postgres` database. */
  url(database?: string): string;
  /** Create a database; resolves with its URL. */
  createDatabase(name: string): string;
  stop(): void;
}

/** Whether the PostgreSQL 15 binaries are there to start a cluster. */
export function canStartPostgres(): boolean {
  return fs.existsSync(path.join(BIN, 'initdb')) && fs.existsSync('/usr/sbin/runuser');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

const asPostgres = (cmd: string, args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', path.join(BIN, cmd), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });

/** Start a cluster (see the module comment). */
export async function startPostgres(): Promise<PostgresCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-pg-'));
  fs.chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const port = await freePort();
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  asPostgres('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -h 127.0.0.1 -F`, 'start']);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url,
    createDatabase(name) {
      execFileSync('runuser', ['-u', 'postgres', '--', path.join(BIN, 'createdb'), '-h', '127.0.0.1', '-p', String(port), name]);
      return url(name);
    },
    stop() {
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

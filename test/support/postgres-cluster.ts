/**
 * A throwaway PostgreSQL cluster for the tests: `initdb` into a temporary
 * folder (as the `postgres` user when the tests run as root, since the
 * server refuses to run as root), `pg_ctl` on a free port of 127.0.0.1 with
 * its unix socket in that folder, password logins over TCP, stopped and
 * deleted at the end. Never a mock: the store is tested against the server.
 *
 * One cluster serves the whole test run: the global setup
 * (postgres-global-setup.ts) names a state folder, the first test file that
 * asks starts the cluster there (under a lock), the others reuse it, and the
 * global teardown stops it. Each test file gets databases of its own
 * (`createDatabase`). Outside vitest's global setup a file starts a cluster
 * of its own and stops it when the process exits.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** Debian's PostgreSQL 15 binaries. */
export const PG_BIN = process.env.WAYSTATION_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** The environment variable the global setup sets to the folder that records the shared cluster. */
export const CLUSTER_STATE_ENV = 'WAYSTATION_TEST_PG_STATE';

/** The superuser's password in every test cluster (logins over TCP need it). */
export const TEST_PASSWORD = 'waystation-test-secret';

export interface ClusterInfo {
  dir: string;
  dataDir: string;
  socketDir: string;
  port: number;
}

function asPostgres(): string[] {
  return process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
}

/** Run a PostgreSQL binary (as the postgres user when we are root). */
async function pgBin(name: string, args: string[]): Promise<void> {
  const [cmd, ...rest] = [...asPostgres(), path.join(PG_BIN, name), ...args];
  await run(cmd, rest, { env: { ...process.env, LC_ALL: 'C' } });
}

function pgBinSync(name: string, args: string[]): void {
  const [cmd, ...rest] = [...asPostgres(), path.join(PG_BIN, name), ...args];
  spawnSync(cmd, rest, { stdio: 'ignore' });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * initdb and start a cluster in a new temporary folder.
 *
 * The tests' cluster skips fsync (its data is thrown away); `durable` keeps
 * the server's defaults (fsync, synchronous commit, full page writes), as the
 * benchmarks need to compare durable saves.
 */
export async function startCluster(opts: { durable?: boolean } = {}): Promise<ClusterInfo> {
  if (!existsSync(path.join(PG_BIN, 'initdb')))
    throw new Error(`PostgreSQL is not installed (${PG_BIN}/initdb is missing): apt-get install postgresql (.ci/run does)`);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-pg-'));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'sock');
  await fs.mkdir(socketDir);
  const pwfile = path.join(dir, 'pwfile');
  await fs.writeFile(pwfile, `${TEST_PASSWORD}\n`);
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres', dir]);
  await pgBin('initdb', [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--pwfile=${pwfile}`,
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      await pgBin('pg_ctl', [
        '-D',
        dataDir,
        '-l',
        path.join(dir, 'server.log'),
        '-w',
        '-o',
        serverOptions(port, socketDir, opts.durable),
        'start',
      ]);
      return { dir, dataDir, socketDir, port };
    } catch (err) {
      // Another process took the port between the probe and the start: try another.
      if (attempt >= 3) throw err;
    }
  }
}

/** The server's command line: its port and socket folder, and the tests' shortcuts unless `durable`. */
function serverOptions(port: number, socketDir: string, durable = false): string {
  return (
    `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c max_connections=200` +
    (durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off')
  );
}

/** Stop the server and keep its data (`pg_ctl stop -m fast`): a server that goes down under its clients. */
export async function stopServer(info: ClusterInfo): Promise<void> {
  await pgBin('pg_ctl', ['-D', info.dataDir, '-m', 'fast', '-w', 'stop']);
}

/** Start a server `stopServer` stopped, on its port again. */
export async function startServer(info: ClusterInfo): Promise<void> {
  await pgBin('pg_ctl', [
    '-D',
    info.dataDir,
    '-l',
    path.join(info.dir, 'server.log'),
    '-w',
    '-o',
    serverOptions(info.port, info.socketDir),
    'start',
  ]);
}

/** Stop a cluster at once and delete its folder. */
export function stopClusterSync(info: ClusterInfo): void {
  pgBinSync('pg_ctl', ['-D', info.dataDir, '-m', 'immediate', '-w', 'stop']);
  spawnSync('rm', ['-rf', info.dir]);
}

/** Restart the server (`pg_ctl restart`): every connection to it is dropped. */
export async function restartCluster(info: ClusterInfo): Promise<void> {
  // With a log file, as at start: the new server must not hold this process's pipes open.
  await pgBin('pg_ctl', ['-D', info.dataDir, '-l', path.join(info.dir, 'server.log'), '-m', 'fast', '-w', 'restart']);
}

let mine: Promise<ClusterInfo> | null = null;

/** Start the shared cluster or find the running one (under a lock: test files run in parallel workers). */
async function sharedCluster(stateDir: string): Promise<ClusterInfo> {
  const record = path.join(stateDir, 'cluster.json');
  const lock = path.join(stateDir, 'lock');
  for (;;) {
    try {
      await fs.mkdir(lock);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    if (existsSync(record)) return JSON.parse(await fs.readFile(record, 'utf8')) as ClusterInfo;
    const info = await startCluster();
    await fs.writeFile(record, JSON.stringify(info));
    return info;
  } finally {
    await fs.rmdir(lock);
  }
}

/** The cluster of this test run, started on first use. */
export function testCluster(): Promise<ClusterInfo> {
  mine ??= (async () => {
    const state = process.env[CLUSTER_STATE_ENV];
    if (state) return sharedCluster(state);
    const info = await startCluster();
    process.once('exit', () => stopClusterSync(info));
    return info;
  })();
  return mine;
}

/** The URL of a database of the cluster, with the password. */
export function clusterUrl(info: ClusterInfo, database: string, password = TEST_PASSWORD): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${info.port}/${database}`;
}

/** Run `fn` on a connection of its own to `url`, closed after it: what a test reads or changes in the rows behind a store. */
export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A new, empty database of the test cluster; returns its URL (with the password). */
export async function createDatabase(prefix = 'ws'): Promise<string> {
  const info = await testCluster();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withClient(clusterUrl(info, 'postgres'), (admin) => admin.query(`CREATE DATABASE ${name}`));
  return clusterUrl(info, name);
}

/** `url` without its password. */
export function withoutPassword(url: string): string {
  const u = new URL(url);
  u.password = '';
  return u.toString();
}

/**
 * A login role of its own, with a password and no rights on the database `adminUrl` names (PostgreSQL 15: only the
 * owner creates in its public schema): the URL that logs in as it, that URL as messages may show it, and its password.
 */
export async function roleWithoutRights(adminUrl: string, prefix: string): Promise<{ url: string; shown: string; password: string }> {
  const role = `${prefix}_${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (c) => c.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`));
  const u = new URL(adminUrl);
  u.username = role;
  u.password = password;
  return { url: u.toString(), shown: withoutPassword(u.toString()), password };
}

/**
 * Directory trust, on the model of VS Code's Workspace Trust.
 *
 * A checkpoint directory can hold code: the agent modules its
 * waystation.config.json registers, and tasks that a host resumes by itself
 * (auto mode). A directory copied from elsewhere must not run any of it
 * before a person has agreed, so every directory is untrusted until someone
 * trusts it, and untrusted means browsed only: nothing imported, started or
 * resumed.
 *
 * The choice is remembered per directory (by its realpath) in one file in the
 * user's configuration folder, with a hash of waystation.config.json, of
 * every module it registers and of the script files its command agents name
 * inside the directory: when any of them changes, the trust is forgotten
 * and the directory is untrusted again.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServiceError } from '../../shared/api/error-codes.js';
import { writeFileAtomic } from '../store/atomic-file.js';
import { nodeFs } from '../store/store-fs.js';
import { isPostgresUrl } from '../store/postgres/redact-url.js';
import { AGENTS_CONFIG_FILE, readAgentsConfig } from './agent-catalog.js';
import { isModuleSpecifier } from './agent-loader.js';
import { hashCodeFile } from './code-file-hash.js';
import { commandFiles } from './command-files.js';

/** The environment variable that puts the trust store elsewhere (tests, side-by-side profiles). */
export const TRUST_FILE_ENV = 'WAYSTATION_TRUST_FILE';
/** The trust store is a short list of folders; far more than that is not one. */
const TRUST_FILE_MAX_BYTES = 16 * 1024 * 1024;

/** Where the trust store lives: `$WAYSTATION_TRUST_FILE`, else `waystation/trusted-directories.json` in the user's configuration folder. */
export function trustFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env[TRUST_FILE_ENV]) return path.resolve(env[TRUST_FILE_ENV]);
  let base: string;
  if (process.platform === 'win32') base = env.APPDATA || path.join(os.homedir(), 'AppData', 'Roaming');
  else if (process.platform === 'darwin' && !env.XDG_CONFIG_HOME) base = path.join(os.homedir(), 'Library', 'Application Support');
  else base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(base, 'waystation', 'trusted-directories.json');
}

/** One file the trust covers, and its sha256 now (null: absent or unreadable). */
export interface TrustedFile {
  file: string;
  sha256: string | null;
}

/** What a directory's trust is given for: its configuration and the modules it registers. */
export interface TrustFingerprint {
  /** The directory's realpath: the key of its record. */
  root: string;
  files: TrustedFile[];
}

/** One agent the directory registers, as its configuration names it (nothing is imported to list it). */
export interface RegisteredCode {
  /** The name the configuration gives, else the module as written. */
  name: string;
  module: string;
  export?: string;
  /** The module's absolute file; null for a package name. */
  file: string | null;
}

async function sha256Of(file: string): Promise<string | null> {
  // Hashed in bounded memory: a pipe or a device in a module's place is refused, not waited on (code-file-hash.ts).
  const hashed = await hashCodeFile(file);
  if (hashed.ok) return hashed.sha256;
  return hashed.reason === 'not-a-file' || hashed.reason === 'too-large' ? `unreadable:${hashed.reason}` : null;
}

/** The agents a directory's configuration registers, read without importing any of them. */
export async function registeredCode(root: string): Promise<{ agents: RegisteredCode[]; problem: string | null }> {
  const config = await readAgentsConfig(root);
  return {
    problem: config.problem,
    agents: config.entries.map((e) => ({
      name: e.name ?? e.module,
      module: e.module,
      ...(e.export ? { export: e.export } : {}),
      file: isModuleSpecifier(e.module) ? path.resolve(root, e.module) : null,
    })),
  };
}

/** The realpath of a directory, or its resolved path when it cannot be resolved (it does not exist yet). */
export async function trustKey(dir: string): Promise<string> {
  // Trust is of a folder, whose code runs: a database's runs from the folder the command runs in (its store's
  // artifactRoot). A URL taken for a path named a folder that does not exist, held nothing, and was trusted, its
  // password written into the trust file: refused here, whoever asks.
  if (isPostgresUrl(dir)) throw new Error("trust is of the folder code runs from (a store's artifactRoot), not of a database URL");
  const resolved = path.resolve(dir);
  return fs.realpath(resolved).catch(() => resolved);
}

/**
 * Hash what a directory's trust covers: waystation.config.json, every module file it registers, and the
 * files each registered command agent's command names inside the directory (command-files.ts).
 */
export async function trustFingerprint(dir: string): Promise<TrustFingerprint> {
  const root = await trustKey(dir);
  const configFile = path.join(root, AGENTS_CONFIG_FILE);
  const files: TrustedFile[] = [{ file: configFile, sha256: await sha256Of(configFile) }];
  const { agents } = await registeredCode(root);
  for (const a of agents) {
    if (a.file && !files.some((f) => f.file === a.file)) files.push({ file: a.file, sha256: await sha256Of(a.file) });
  }
  for (const c of (await readAgentsConfig(root)).commands) {
    for (const f of await commandFiles(root, c.command)) {
      if (!files.some((x) => x.file === f.path)) files.push({ file: f.path, sha256: f.sha256 ?? `unreadable:${f.reason}` });
    }
  }
  return { root, files };
}

interface TrustRecord {
  trusted_at: string;
  files: Record<string, string | null>;
}

interface TrustStoreFile {
  format: 'waystation-trust';
  directories: Record<string, TrustRecord>;
}

/** Why the trust store could not be used: the file, what is wrong, and what to do. */
export class TrustStoreError extends ServiceError {
  readonly code = 'io';
}

async function readTrustStore(file: string): Promise<TrustStoreFile> {
  const empty: TrustStoreFile = { format: 'waystation-trust', directories: {} };
  let text: string;
  try {
    const read = await nodeFs.readWholeFile(file, { maxBytes: TRUST_FILE_MAX_BYTES, followLinks: true });
    if (!read.ok) throw new TrustStoreError(`the trust store ${file} is not a regular file of at most ${TRUST_FILE_MAX_BYTES} bytes`);
    text = read.bytes.toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty;
    if (err instanceof TrustStoreError) throw err;
    throw new TrustStoreError(`the trust store ${file} cannot be read (${(err as Error).message})`);
  }
  try {
    const doc = JSON.parse(text) as Partial<TrustStoreFile>;
    if (doc?.format !== 'waystation-trust' || typeof doc.directories !== 'object' || doc.directories === null)
      throw new Error('not a trust store');
    const directories = { ...doc.directories };
    const urls = Object.keys(directories).filter((key) => TAKEN_FOR_A_PATH.test(key));
    if (urls.length === 0) return { format: 'waystation-trust', directories };
    // Entries an earlier build wrote for a database URL taken for a folder (resume and approve of a database's
    // task did): no folder, and a password kept in clear. Dropped, and the file rewritten without them now, as a
    // read that finds a secret it must not hold.
    for (const key of urls) delete directories[key];
    const cleaned: TrustStoreFile = { format: 'waystation-trust', directories };
    await writeFileAtomic(nodeFs, file, `${JSON.stringify(cleaned, null, 2)}\n`).catch(() => undefined);
    return cleaned;
  } catch {
    // A damaged store trusts nothing: every directory asks again, and trusting one writes a fresh store.
    return empty;
  }
}

/** A `postgres://` or `postgresql://` URL resolved as a path (`/cwd/postgres:/user:password@host/db`). */
const TAKEN_FOR_A_PATH = /(^|[\\/])postgres(ql)?:[\\/][^\\/]/;

function matches(record: TrustRecord | undefined, print: TrustFingerprint): boolean {
  if (!record || typeof record.files !== 'object' || record.files === null) return false;
  const recorded = Object.keys(record.files);
  if (recorded.length !== print.files.length) return false;
  return print.files.every((f) => Object.prototype.hasOwnProperty.call(record.files, f.file) && record.files[f.file] === f.sha256);
}

/** A directory's trust as it stands now. */
export interface TrustState {
  root: string;
  trusted: boolean;
  /** Trusted before, but its configuration or a registered module changed since. */
  changed: boolean;
}

/** Whether a person trusted `dir`, and its configuration and registered modules are those it was trusted with. */
export async function trustState(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<TrustState> {
  const print = await trustFingerprint(dir);
  const store = await readTrustStore(trustFilePath(env)).catch(() => null);
  const record = store?.directories[print.root];
  const trusted = matches(record, print);
  return { root: print.root, trusted, changed: record !== undefined && !trusted };
}

/** Whether `dir` is trusted now (see trustState). */
export async function isTrusted(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  return (await trustState(dir, env)).trusted;
}

/**
 * Record that a person trusts `dir` as it is now: its configuration and the
 * modules it registers. A later change to any of them forgets the trust.
 */
export async function trustDirectory(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<TrustFingerprint> {
  const print = await trustFingerprint(dir);
  const file = trustFilePath(env);
  const store = await readTrustStore(file);
  store.directories[print.root] = {
    trusted_at: new Date().toISOString(),
    files: Object.fromEntries(print.files.map((f) => [f.file, f.sha256])),
  };
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(nodeFs, file, `${JSON.stringify(store, null, 2)}\n`);
  } catch (err) {
    throw new TrustStoreError(
      `${print.root} could not be trusted: the trust store ${file} cannot be written (${(err as Error).message}); set ${TRUST_FILE_ENV} to put it elsewhere`,
    );
  }
  return print;
}

/** Forget the trust given to `dir` (it is untrusted again). */
export async function distrustDirectory(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const root = await trustKey(dir);
  const file = trustFilePath(env);
  const store = await readTrustStore(file);
  if (!store.directories[root]) return;
  delete store.directories[root];
  await writeFileAtomic(nodeFs, file, `${JSON.stringify(store, null, 2)}\n`);
}

/** How to trust a directory, for refusals and prompts. */
export function howToTrust(root: string): string {
  return `trust it first: in the app, Trust this folder…; on the command line, add --trust (or answer the question) to waystation serve ${root}, run, resume or approve`;
}

/**
 * The trust gate a host checks before it runs anything: whether a directory
 * is trusted, and recording that it is. Injected, so a host under test can
 * trust the directories it was built for.
 */
export interface TrustGate {
  isTrusted(root: string): Promise<boolean>;
  trust(root: string): Promise<void>;
  /** Whether it is trusted, and whether a trust given before was forgotten because something changed. */
  state?(root: string): Promise<Pick<TrustState, 'trusted' | 'changed'>>;
}

/** The trust gate over the user's trust store. */
export function userTrustGate(env: NodeJS.ProcessEnv = process.env): TrustGate {
  return {
    isTrusted: (root) => isTrusted(root, env),
    state: (root) => trustState(root, env),
    trust: async (root) => {
      await trustDirectory(root, env);
    },
  };
}

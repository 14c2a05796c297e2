/**
 * The one place a location argument becomes a store: a checkpoint
 * directory's path, or a `postgres://` / `postgresql://` URL. The CLI, the
 * runtime (Runner, workers) and the host's open all call `openLocation`, so a
 * new kind of store (or read-only source) is one more entry in LOCATION_KINDS.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { openStore, type StoreOptions } from './directory-store.js';
import { isPostgresUrl, openPostgresStore, type PostgresStoreOptions } from './postgres/postgres-store.js';
import { sameDatabase } from './postgres/database-identity.js';
import type { CheckpointStore } from './store-types.js';

export interface OpenLocationOptions {
  directory?: StoreOptions;
  postgres?: PostgresStoreOptions;
}

/** One kind of location: how to recognise it, and how to open it. */
interface LocationKind {
  name: string;
  matches(location: string): boolean;
  open(location: string, opts: OpenLocationOptions): CheckpointStore;
  /** Whether two locations of this kind surely name one store, however each is written. */
  same(a: string, b: string): Promise<boolean>;
}

/** Tried in order; the directory comes last and takes any other string as a path. */
const LOCATION_KINDS: readonly LocationKind[] = [
  {
    name: 'postgres',
    matches: isPostgresUrl,
    open: (url, opts) => openPostgresStore(url, opts.postgres),
    same: async (a, b) => sameDatabase(a, b),
  },
  { name: 'directory', matches: () => true, open: (dir, opts) => openStore(dir, opts.directory), same: sameDirectory },
];

function kindOf(location: string): LocationKind {
  return LOCATION_KINDS.find((k) => k.matches(location))!;
}

/** The kind of store a location names: `postgres` for a PostgreSQL URL, else `directory`. */
export function locationKind(location: string): string {
  return kindOf(location).name;
}

/**
 * Whether two locations name one store: one database however its URL is
 * written (database-identity.ts), one directory however it is reached (a
 * link, `..`). Nothing is connected or created to tell.
 */
export async function sameStore(a: string, b: string): Promise<boolean> {
  const kind = kindOf(a);
  return kind === kindOf(b) && kind.same(a, b);
}

/** Two paths to one existing folder (a folder not there yet is no other's). */
async function sameDirectory(a: string, b: string): Promise<boolean> {
  const [ra, rb] = await Promise.all([a, b].map((p) => realpath(p).catch(() => null)));
  return ra !== null && ra === rb;
}

/**
 * Open the store a location names.
 *
 * Nothing is read, created or connected until a method is called.
 */
export function openLocation(location: string, opts: OpenLocationOptions = {}): CheckpointStore {
  return LOCATION_KINDS.find((k) => k.matches(location))!.open(location, opts);
}

/** A location made absolute where it is a path (a URL stays as it is), so a worker started elsewhere opens the same store. */
export function resolveLocation(location: string): string {
  return locationKind(location) === 'directory' ? path.resolve(location) : location;
}

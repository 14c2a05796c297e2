/**
 * Malformed input: a corpus generated with fast-check by mutating a valid task
 * (truncation, wrong types, huge strings, deep nesting, duplicate keys,
 * invalid UTF-8, a future schema, version numbers that contradict the files
 * (checkpoint.json ahead of versions/, a file holding another version than its
 * name), symlink cycles and links out of the root,
 * named pipes and links to devices that never stop giving bytes),
 * put through every reader: the CLI (ls, show, history, diff, verify), and the
 * host API, whose listTasks and getTask are what the UI loads through.
 *
 * No reader may crash or hang; a task that cannot be shown carries a typed
 * problem; the other task of the directory stays readable; and the bytes on
 * disk are the same afterwards.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { runCli } from '../../../electron/cli/main.js';
import { HostService } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { parseSegment } from '../../../electron/store/version-records.js';
import type { ApiMethod } from '../../../shared/api/contract.js';
import { ApiError } from '../../../shared/api/api-error.js';
import { dispatch } from '../../../shared/api/dispatch.js';
import { ProblemReason } from '../../../shared/checkpoint/problem.js';
import { makeCheckpoint, withoutVersion } from '../../electron/store/store-test-helpers.js';
import { HangError, messageOf, Tally, withTimeout, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';
import { treeDigest as hashTree } from '../../support/hash-tree.js';

const CHECKS = [
  'reader crashed',
  'reader hung',
  'unreadable without a typed problem',
  'another task became unreadable',
  'bytes on disk changed',
  'secret outside the root was read',
] as const;

/** What a JavaScript failure, rather than a reader's own message, looks like. */
const CRASH =
  /Maximum call stack|RangeError|TypeError|ReferenceError|Cannot read propert|is not a function|is not iterable|undefined is not/;
const SECRET = 'TOP-SECRET-OUTSIDE-THE-ROOT';
/** `versions/00000005.json` is a segment (versions 5 to 8, sealed records); `seal` is its first record's seal line. */
const TARGETS = [
  'checkpoint.json',
  'versions/00000001.json',
  'versions/00000003.json',
  'versions/00000005.json',
  'seal',
  'blob',
  'events.jsonl',
  'lease',
] as const;
const KINDS = [
  'truncate',
  'wrong-type',
  'huge-string',
  'deep-nesting',
  'duplicate-keys',
  'invalid-utf8',
  'future-schema',
  'symlink-cycle',
  'symlink-outside',
  'fifo',
  'device-link',
  'random-bytes',
  'empty',
  'version-renumbered',
  'version-misplaced',
] as const;

/** One mutation of one file of the victim task. */
export const Mutation = fc.record({
  target: fc.constantFrom(...TARGETS),
  kind: fc.constantFrom(...KINDS),
  /** Where in the file or document, as a fraction. */
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(null), fc.string(), fc.integer(), fc.boolean()),
  // Around the readers' limit (512) as well as far past it.
  depth: fc.oneof(fc.integer({ min: 400, max: 600 }), fc.integer({ min: 1_000, max: 200_000 })),
  bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }),
});
export type Mutation = typeof Mutation extends fc.Arbitrary<infer T> ? T : never;

/** Every path holding a value in a JSON document, for wrong-type mutations. */
function paths(doc: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (doc && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      const p = [...prefix, Array.isArray(doc) ? Number(k) : k];
      out.push(p);
      if (out.length < 2000) paths(v, p, out);
    }
  }
  return out;
}

function setAt(doc: unknown, p: (string | number)[], value: unknown): void {
  let cur = doc as Record<string | number, unknown>;
  for (const k of p.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  cur[p[p.length - 1]] = value;
}

/** Mutations that change a JSON document's content rather than its bytes. */
const DOCUMENT_KINDS: ReadonlySet<Mutation['kind']> = new Set([
  'wrong-type',
  'huge-string',
  'deep-nesting',
  'duplicate-keys',
  'future-schema',
  'version-renumbered',
]);

/**
 * Mutate one file of the task; returns what was done, in words. A version file is an envelope line followed by
 * the blobs it carries, one per line: a blob mutation rewrites the first
 * carried blob's line, and a document mutation of a version rewrites its
 * envelope line; the rest of the file stays as it was.
 */
export async function mutate(taskDir: string, outside: string, m: Mutation): Promise<string> {
  let rel: string = m.target;
  if (m.target === 'blob') rel = 'versions/00000002.json';
  if (m.target === 'seal') rel = 'versions/00000005.json';
  if (m.target === 'lease') rel = 'lease/1.json';
  const file = path.join(taskDir, rel);
  if (m.target === 'lease') await fs.mkdir(path.dirname(file), { recursive: true });
  const whole = await fs
    .readFile(file)
    .catch(() => Buffer.from('{"owner":"w","pid":1,"hostname":"h","acquired_at":"x","heartbeat_at":"x","released":false}'));
  // The bytes the mutation applies to: [from, to) of the file.
  let [from, to] = [0, whole.length];
  const lineBreak = whole.indexOf(0x0a);
  const records = rel === 'versions/00000005.json' ? parseSegment(whole, 5).records : [];
  if (m.target === 'blob') {
    from = lineBreak + 1;
    to = whole.indexOf(0x0a, from);
    rel += ', its first carried blob';
  } else if (m.target === 'seal' && records.length > 0) {
    from = records[0].end;
    to = whole.indexOf(0x0a, from);
    rel += ', the seal line of its first record';
  } else if (records.length > 1 && DOCUMENT_KINDS.has(m.kind)) {
    from = records[1].start;
    to = records[1].envelopeEnd ?? from;
    rel += ', the envelope line of its second record (version 6)';
  } else if (rel.startsWith('versions/') && lineBreak >= 0 && DOCUMENT_KINDS.has(m.kind)) {
    to = lineBreak;
    rel += ', its envelope line';
  }
  const original = whole.subarray(from, to);
  const text = original.toString('utf8');
  const doc = (() => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  })();
  /** A position in [0, n]: n means the end (a truncation keeping everything). */
  const at = (n: number) => Math.floor(m.at * n);
  /** An index in [0, n). */
  const index = (n: number) => Math.min(n - 1, Math.floor(m.at * n));
  let out: Buffer | string;
  switch (m.kind) {
    case 'truncate':
      out = original.subarray(0, at(original.length));
      break;
    case 'empty':
      out = '';
      break;
    case 'wrong-type': {
      const all = doc ? paths(doc) : [];
      if (all.length === 0) return `${rel}: nothing to retype`;
      const p = all[index(all.length)];
      setAt(doc, p, m.value);
      out = JSON.stringify(doc);
      rel += ` at ${p.join('.')}`;
      break;
    }
    case 'huge-string': {
      const all = doc ? paths(doc) : [];
      if (all.length === 0) return `${rel}: nothing to grow`;
      const p = all[index(all.length)];
      setAt(doc, p, 'x'.repeat(4 * 1024 * 1024));
      out = JSON.stringify(doc);
      rel += ` at ${p.join('.')}`;
      break;
    }
    case 'deep-nesting': {
      const all = doc ? paths(doc) : [];
      const nest = `${'['.repeat(m.depth)}${']'.repeat(m.depth)}`;
      if (all.length === 0) {
        out = nest;
        break;
      }
      const p = all[index(all.length)];
      setAt(doc, p, '__NEST__');
      out = JSON.stringify(doc).replace('"__NEST__"', nest);
      rel += ` at ${p.join('.')}, depth ${m.depth}`;
      break;
    }
    case 'duplicate-keys': {
      const brace = text.indexOf('{');
      if (brace < 0) return `${rel}: no object`;
      out = `${text.slice(0, brace + 1)}"version":${JSON.stringify(m.value)},"status":${JSON.stringify(m.value)},"schema_version":${JSON.stringify(m.value)},${text.slice(brace + 1)}`;
      break;
    }
    case 'invalid-utf8': {
      const i = at(original.length);
      out = Buffer.concat([original.subarray(0, i), Buffer.from([0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80]), original.subarray(i)]);
      break;
    }
    case 'future-schema':
      if (!doc || typeof doc !== 'object') return `${rel}: not an object`;
      if ('checkpoint' in doc) (doc as { checkpoint: Record<string, unknown> }).checkpoint.schema_version = 99;
      else (doc as Record<string, unknown>).schema_version = 99;
      out = JSON.stringify(doc);
      break;
    case 'version-renumbered': {
      // checkpoint.json claiming a version past the files, or an envelope holding another version than its file's name.
      if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return `${rel}: not an object`;
      const d = doc as Record<string, unknown>;
      d.version = (typeof d.version === 'number' ? d.version : 0) + 1 + index(10);
      out = JSON.stringify(doc);
      rel += `, its version set to ${String(d.version)}`;
      break;
    }
    case 'version-misplaced': {
      // Another version's file copied over this one: a file stored under the wrong number. Version 1's file, unless
      // the target is version 1's file itself (then version 2's): read before the target is removed, which may be it.
      const one = path.join(taskDir, 'versions/00000001.json');
      const source = path.resolve(file) === path.resolve(one) ? path.join(taskDir, 'versions/00000002.json') : one;
      const bytes = await fs.readFile(source).catch(() => null);
      if (!bytes) return `${rel}: no other version file to copy over it`;
      await fs.rm(file, { force: true });
      await fs.writeFile(file, bytes);
      return `${m.target === 'seal' || m.target === 'blob' ? rel.split(',')[0] : rel}: replaced by a copy of ${path.basename(source)}`;
    }
    case 'random-bytes': {
      const i = at(original.length);
      out = Buffer.concat([original.subarray(0, i), Buffer.from(m.bytes), original.subarray(i + m.bytes.length)]);
      break;
    }
    case 'symlink-cycle':
      await fs.rm(file, { force: true });
      await fs.symlink(`${path.basename(file)}.loop`, file);
      await fs.symlink(path.basename(file), `${file}.loop`);
      return `${rel}: a symlink cycle`;
    case 'symlink-outside':
      await fs.rm(file, { force: true });
      await fs.symlink(outside, file);
      return `${rel}: a symlink out of the root`;
    case 'fifo':
      // Opening a pipe for reading waits for a writer unless the reader asks not to: a reader that forgets hangs.
      await fs.rm(file, { force: true });
      execFileSync('mkfifo', [file]);
      return `${rel}: a named pipe`;
    case 'device-link':
      await fs.rm(file, { force: true });
      await fs.symlink('/dev/zero', file);
      return `${rel}: a symlink to /dev/zero`;
  }
  await fs.writeFile(file, Buffer.concat([whole.subarray(0, from), Buffer.from(out), whole.subarray(to)]));
  return `${rel}: ${m.kind}`;
}

/**
 * A task with full and delta versions, blobs, history and events, to mutate: what `mutate` expects to find.
 * Versions 1 to 4 are files of their own; 5 to 8 were saved under the lease, a segment in versions/00000005.json,
 * and the lease was not let go, so checkpoint.json lags at version 4 and readers apply the segment to it.
 */
export async function victimTask(root: string, taskId: string): Promise<void> {
  const store = openStore(root);
  const lease = { taskId, held: true, generation: 1 };
  let cp = (await store.create(makeCheckpoint(taskId, 7))).checkpoint;
  for (let v = 2; v <= 8; v++) {
    const next = withoutVersion(cp);
    next.plan = next.plan.map((s, i) => (i === v - 2 ? { ...s, status: 'done' as const, attempts: 1 } : s));
    next.current_step = v - 1;
    const request = {
      expectedVersion: cp.version,
      checkpoint: next,
      results: { [next.plan[v - 2].id]: { v } },
      appendHistory: [{ role: 'user' as const, content: `m${v}` }],
    };
    cp = (await store.save(taskId, v >= 5 ? { ...request, lease } : request)).checkpoint;
  }
}

/** The victim and a healthy task beside it, to mutate copies of. */
async function template(root: string): Promise<void> {
  await victimTask(root, 'victim');
  await openStore(root).create(makeCheckpoint('healthy'));
}

/** The corpus through the CLI and the host API. */
export async function malformedInput(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('malformed input (fast-check corpus)', CHECKS, opts.seed);
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-malformed-'));
  const outside = path.join(base, 'outside.json');
  await fs.writeFile(outside, JSON.stringify({ secret: SECRET, schema_version: 2 }));
  const pristine = path.join(base, 'template');
  await fs.mkdir(pristine);
  await template(pristine);
  const corpus = fc.sample(Mutation, { numRuns: opts.runs, seed: opts.seed });
  try {
    for (const [i, m] of corpus.entries()) {
      const root = path.join(base, `entry-${i}`);
      await fs.cp(pristine, root, { recursive: true });
      const what = await mutate(path.join(root, 'victim'), outside, m);
      const where = `entry ${i} (${what}, seed ${opts.seed})`;
      tally.runs++;
      tally.faults++;
      tally.bump(`mutations: ${m.kind}`);
      const before = await hashTree(root);
      await throughReaders(root, where, tally);
      if ((await hashTree(root)) !== before) tally.violation('bytes on disk changed', where);
      await fs.rm(root, { recursive: true, force: true });
      if ((i + 1) % 200 === 0) opts.log(`malformed input: ${i + 1}/${corpus.length}, ${tally.total} violations`);
    }
  } finally {
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}

/** Run one reader; a crash or a hang is a violation, a typed refusal is fine. */
async function guarded(name: string, where: string, tally: Tally, fn: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await withTimeout(fn(), 20_000, name);
    const text = JSON.stringify(value ?? null) ?? '';
    if (text.includes(SECRET)) tally.violation('secret outside the root was read', `${where}: ${name}`);
    return value;
  } catch (err) {
    if (err instanceof HangError) tally.violation('reader hung', `${where}: ${name}`);
    else if (!(err instanceof ApiError) || CRASH.test(err.message))
      tally.violation('reader crashed', `${where}: ${name}: ${messageOf(err)}`);
    else if (err.message.includes(SECRET)) tally.violation('secret outside the root was read', `${where}: ${name}`);
    return undefined;
  }
}

async function throughReaders(root: string, where: string, tally: Tally): Promise<void> {
  // The CLI, in this process: the same code as the binary minus the spawn.
  for (const args of [
    ['ls', root, '--json'],
    ['show', root, 'victim', '--json'],
    ['history', root, 'victim', '--json'],
    ['diff', root, 'victim', '1', '3', '--json'],
    ['verify', root, 'victim', '--json'],
  ]) {
    let out = '';
    let err = '';
    const code = await withTimeout(
      runCli(args, { out: (s) => void (out += s), err: (s) => void (err += s), color: false }),
      20_000,
      `waystation ${args[0]}`,
    ).catch((e: unknown) => {
      tally.violation(e instanceof HangError ? 'reader hung' : 'reader crashed', `${where}: waystation ${args[0]}: ${messageOf(e)}`);
      return null;
    });
    if (code === null) continue;
    if (![0, 1, 2].includes(code) || CRASH.test(err))
      tally.violation('reader crashed', `${where}: waystation ${args[0]} exited ${code}: ${err.trim().slice(0, 300)}`);
    if ((out + err).includes(SECRET)) tally.violation('secret outside the root was read', `${where}: waystation ${args[0]}`);
  }

  // The host API: the UI loads through listTasks and getTask.
  const service = new HostService({ host: 'web', runner: null });
  try {
    await withTimeout(service.open(root), 20_000, 'opening the directory');
    // Through dispatch, as both transports call the service: inputs validated, errors typed.
    const call = (method: ApiMethod, input: unknown) => guarded(method, where, tally, () => dispatch(service, method, input));
    const list = (await call('listTasks', {})) as Awaited<ReturnType<HostService['listTasks']>> | undefined;
    const healthy = list?.find((t) => t.task_id === 'healthy');
    if (list && (!healthy || healthy.problems.some((p) => p.severity === 'error')))
      tally.violation('another task became unreadable', `${where}: ${JSON.stringify(healthy?.problems ?? 'missing')}`);
    const detail = (await call('getTask', { taskId: 'victim' })) as Awaited<ReturnType<HostService['getTask']>> | undefined;
    if (detail) {
      if (!detail.checkpoint && detail.problems.length === 0) tally.violation('unreadable without a typed problem', `${where}: getTask`);
      if (detail.problems.some((p) => !ProblemReason.safeParse(p.reason).success))
        tally.violation('unreadable without a typed problem', `${where}: a problem with reason outside the list`);
      tally.bump(detail.problems.length > 0 ? 'entries shown with a typed problem' : 'entries still read whole');
    }
    const summary = list?.find((t) => t.task_id === 'victim');
    if (summary && summary.display_status === 'unreadable' && summary.problems.length === 0)
      tally.violation('unreadable without a typed problem', `${where}: listTasks`);
    await call('getTask', { taskId: 'victim', version: 1 });
    await call('getHistory', { taskId: 'victim' });
    await call('diffVersions', { taskId: 'victim', a: 1, b: 3 });
    await call('verifyTask', { taskId: 'victim' });
    await call('getMessages', { taskId: 'victim' });
    await call('getStepResult', { taskId: 'victim', stepId: 's1' });
  } catch (err) {
    tally.violation(err instanceof HangError ? 'reader hung' : 'reader crashed', `${where}: the host: ${messageOf(err)}`);
  } finally {
    await service.close();
  }
}

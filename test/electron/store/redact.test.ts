/**
 * The API key never reaches a checkpoint: every string the store writes is
 * scrubbed, whoever wrote it and wherever it sits (an object key, a message,
 * its metadata, an event, what a person typed), and a task id holding it is
 * refused. End to end too: a model server that echoes the key it is sent.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../electron/store/directory-store.js';
import { StoreWriteError } from '../../../electron/store/store-types.js';
import { secretsOf } from '../../../electron/store/redact.js';
import { captureCli as cli } from '../cli/capture-cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../fakes/fake-openai-server.js';
import { cleanup, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

const KEY = 'sk-test-echoed-4f9c2e7b1a';
let root: string;
let saved: string | undefined;

/** Every file under `dir`, as text. */
async function allText(dir: string): Promise<string> {
  let out = '';
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out += await fs.readFile(path.join(e.parentPath, e.name), 'utf8');
  }
  return out;
}

beforeEach(async () => {
  root = await tempRoot('waystation-redact-');
  saved = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = KEY;
});
afterEach(async () => {
  if (saved === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = saved;
  await cleanup(root);
});

describe('the store scrubs the key from everything it writes', () => {
  it('object keys and values of a step result, messages and their metadata, decisions, events', async () => {
    const store = openStore(root);
    const first = await store.create(makeCheckpoint('t', 3, { goal: `goal with ${KEY}` }));
    const cp = withoutVersion(first.checkpoint);
    const decided = {
      ...cp,
      recovery: {
        ...cp.recovery,
        decisions: [
          { approval_id: 'a1', at: '2026-01-01T00:00:00Z', by: `author ${KEY}`, decision: 'rejected' as const, reason: `because ${KEY}` },
        ],
      },
      plan: cp.plan.map((s, i) => (i === 1 ? { ...s, result: { edited: KEY } } : s)),
    };
    await store.save('t', {
      expectedVersion: 1,
      checkpoint: decided as typeof cp,
      results: { s1: { [KEY]: `remembered ${KEY}`, nested: [{ [`k-${KEY}`]: 1 }] } },
      appendHistory: [{ role: 'assistant', content: `the key is ${KEY}`, model: KEY } as never],
    });
    await store.appendEvent('t', { type: 'note', data: { [KEY]: KEY } } as never);
    const text = await allText(path.join(root, 't'));
    expect(text).not.toContain(KEY);
    expect(text).toContain('[redacted]');
    const fresh = openStore(root);
    const entry = await fresh.getTask('t');
    expect(JSON.stringify(entry!.checkpoint)).not.toContain(KEY);
    expect(JSON.stringify(await fresh.readHistory('t'))).not.toContain(KEY);
  });

  it('refuses a task id that holds the key, naming neither the id nor the key', async () => {
    const err = await openStore(root)
      .create(makeCheckpoint(`task-${KEY}`))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(StoreWriteError);
    expect((err as Error).message).not.toContain(KEY);
    expect(await fs.readdir(root)).toEqual([]);
  });
});

describe('the secrets are those of the environment at each write', () => {
  it('a key set, changed or removed between two saves of one store is scrubbed as it stands at the second', async () => {
    const store = openStore(root);
    const first = await store.create(makeCheckpoint('t', 2));
    const later = 'tok-set-after-open-9b1e77';
    process.env.WAYSTATION_TEST_TOKEN = later;
    process.env.OPENAI_API_KEY = `${KEY}-rotated`;
    try {
      expect(secretsOf()).toEqual(expect.arrayContaining([`${KEY}-rotated`, later]));
      expect(secretsOf()).not.toContain(KEY);
      const cp = withoutVersion(first.checkpoint);
      await store.save('t', { expectedVersion: 1, checkpoint: { ...cp, goal: `uses ${later} and ${KEY}-rotated` } });
      const text = await allText(path.join(root, 't'));
      expect(text).not.toContain(later);
      expect(text).not.toContain(`${KEY}-rotated`);
    } finally {
      delete process.env.WAYSTATION_TEST_TOKEN;
    }
    expect(secretsOf()).not.toContain(later);
    expect(secretsOf()).toContain(`${KEY}-rotated`);
    delete process.env.OPENAI_API_KEY;
    expect(secretsOf()).not.toContain(`${KEY}-rotated`);
  });
});

describe('what a save passes back unchanged', () => {
  it('a key set after the last save is scrubbed from the steps the next save shares with it', async () => {
    const later = 'tok-shared-after-save-51c0d9';
    const store = openStore(root);
    const first = await store.create(makeCheckpoint('t', 4));
    const cp = withoutVersion(first.checkpoint);
    // Written while the token is no secret yet: the steps are then passed back as the very objects the store returned.
    const named = cp.plan.map((s, i) => (i === 2 ? { ...s, name: `calls ${later}` } : s));
    let last = (await store.save('t', { expectedVersion: 1, checkpoint: { ...cp, plan: named } })).checkpoint;
    expect(JSON.stringify(last)).toContain(later);
    last = (await store.save('t', { expectedVersion: 2, checkpoint: { ...withoutVersion(last), phase: 'again' } })).checkpoint;
    process.env.WAYSTATION_TEST_TOKEN = later;
    try {
      const next = await store.save('t', { expectedVersion: 3, checkpoint: { ...withoutVersion(last), phase: 'after the key' } });
      expect(JSON.stringify(next.checkpoint)).not.toContain(later);
      expect(next.checkpoint.plan[2].name).toBe('calls [redacted]');
      expect(await fs.readFile(path.join(root, 't', 'checkpoint.json'), 'utf8')).not.toContain(later);
      expect(JSON.stringify((await openStore(root).getTask('t'))!.checkpoint)).not.toContain(later);
    } finally {
      delete process.env.WAYSTATION_TEST_TOKEN;
    }
  });
});

describe('a model server that echoes the key', () => {
  let server: FakeOpenAiServer;
  beforeEach(async () => {
    server = await startFakeOpenAiServer();
    for (let i = 0; i < 8; i++) server.script({ kind: 'ok', echoKey: true });
  });
  afterEach(async () => {
    await server.close();
  });

  it('leaves no trace of it in the task folder, nor in what the CLI shows', async () => {
    const env = { OPENAI_BASE_URL: server.baseURL, SKIP_FAILURE: '1' };
    const before = { ...process.env };
    Object.assign(process.env, env);
    try {
      const run = await cli('run', root, 'checkpoint-demo', '--task', 'echo');
      expect(server.requests.length).toBeGreaterThan(0);
      expect(server.requests[0].authorization).toBe(`Bearer ${KEY}`);
      expect(`${run.out}${run.err}`).not.toContain(KEY);
      expect(await allText(path.join(root, 'echo'))).not.toContain(KEY);
      const shown = await cli('show', root, 'echo', '--json');
      expect(shown.out).not.toContain(KEY);
    } finally {
      process.env = before;
    }
  });
});

/**
 * JSON nested far deeper than any checkpoint is a typed problem on its task,
 * never a stack overflow in a reader (parsing is iterative, but serialising,
 * cloning and diffing a value are not).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { MAX_JSON_DEPTH, opensMoreThan, parseJsonBytes } from '../../../electron/store/file-reader.js';
import { cleanup, makeCheckpoint, tempRoot } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot('waystation-deep-');
});
afterEach(async () => {
  await cleanup(root);
});

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('deeply nested JSON', () => {
  it('is refused with a typed problem past the limit, and read below it', () => {
    const deep = parseJsonBytes('f.json', Buffer.from(`{"a":${nested(100_000)}}`));
    expect(deep.ok).toBe(false);
    expect(!deep.ok && deep.problem.reason).toBe('too-large');
    expect(!deep.ok && deep.problem.message).toMatch(/nested .* levels/);
    expect(parseJsonBytes('f.json', Buffer.from(`{"a":${nested(200)}}`)).ok).toBe(true);
  });

  it('decides by the depth, not by how many brackets a file has', () => {
    // Thousands of brackets side by side, or inside strings, nest no deeper than two.
    const wide = `{"a":[${Array.from({ length: 5000 }, () => '{}').join(',')}],"s":"${'['.repeat(2000)}"}`;
    expect(opensMoreThan(wide, MAX_JSON_DEPTH)).toBe(true);
    expect(parseJsonBytes('f.json', Buffer.from(wide)).ok).toBe(true);
    // At the limit exactly it reads; one level more is refused, with few brackets beside.
    expect(parseJsonBytes('f.json', Buffer.from(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`)).ok).toBe(true);
    expect(parseJsonBytes('f.json', Buffer.from(`{"a":${nested(MAX_JSON_DEPTH)}}`)).ok).toBe(false);
    expect(opensMoreThan(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`, MAX_JSON_DEPTH)).toBe(false);
  });

  it('in a version file and the hot snapshot leaves the task listed with a problem, and history answers', async () => {
    const store = openStore(root);
    await store.create(makeCheckpoint('t'));
    const versionFile = path.join(root, 't', 'versions', '00000001.json');
    const text = await fs.readFile(versionFile, 'utf8');
    await fs.writeFile(versionFile, text.replace('"format":"waystation-version"', `"format":${nested(150_000)}`));
    const hot = path.join(root, 't', 'checkpoint.json');
    await fs.writeFile(hot, (await fs.readFile(hot, 'utf8')).replace('"phase":"start"', `"phase":${nested(150_000)}`));
    const entry = await store.getTask('t');
    expect(entry?.checkpoint).toBeNull();
    expect(entry?.problems.map((p) => p.reason)).toContain('too-large');
    expect(await store.history('t')).toEqual([]);
    expect((await store.listTasks()).map((t) => t.task_id)).toEqual(['t']);
  });
});

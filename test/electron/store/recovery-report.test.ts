/**
 * The recovery report: what a task recovered to after an interruption, and
 * what did not survive, in words.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { recoveryReport } from '../../../electron/store/recovery-report.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot('waystation-recovery-');
});
afterEach(async () => {
  await cleanup(root);
});

describe('recoveryReport', () => {
  it('says only where a task stands when nothing was lost', async () => {
    await openStore(root).create(makeCheckpoint('t'));
    const report = await recoveryReport(root, 't');
    expect(report).toMatchObject({
      latest_version: 1,
      hot_version: 1,
      interrupted_versions: [],
      leftover_temp_files: [],
      events_behind: 0,
      torn_event_bytes: 0,
    });
    expect(report.account).toEqual(['task t recovered to version 1, the newest complete version in versions/']);
  });

  it('names an interrupted save, a hot snapshot behind, lost and torn events, and leftovers, without writing', async () => {
    const store = openStore(root);
    const v1 = (await store.create(makeCheckpoint('t'))).checkpoint;
    const hotV1 = await fs.readFile(path.join(root, 't', 'checkpoint.json'));
    await store.save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' } });
    // What a power cut can leave: checkpoint.json at version 1, version 3's temp file, the log without its last line and torn.
    await fs.writeFile(path.join(root, 't', 'checkpoint.json'), hotV1);
    await fs.writeFile(path.join(root, 't', 'versions', '.00000003.json.ab12cd.tmp'), '{"format":"waystation-ver');
    const log = (await fs.readFile(path.join(root, 't', 'events.jsonl'), 'utf8')).trim().split('\n');
    await fs.writeFile(path.join(root, 't', 'events.jsonl'), `${log.slice(0, -1).join('\n')}\n{"id":9,"ty`);
    const before = await hashTree(root);

    const report = await recoveryReport(root, 't');
    expect(report).toMatchObject({ latest_version: 2, hot_version: 1, interrupted_versions: [3], events_behind: 1, torn_event_bytes: 11 });
    expect(report.leftover_temp_files).toEqual([{ file: 't/versions/.00000003.json.ab12cd.tmp', bytes: 25 }]);
    expect(report.account.join('\n')).toMatch(/recovered to version 2/);
    expect(report.account.join('\n')).toMatch(/the save of version 3 was interrupted before its commit point/);
    expect(report.account.join('\n')).toMatch(/checkpoint.json holds version 1, behind version 2/);
    expect(report.account.join('\n')).toMatch(/lacks the events of the last 1 version/);
    expect(await hashTree(root)).toEqual(before);
  });

  it('says a task has no version when its creation was interrupted', async () => {
    await fs.mkdir(path.join(root, 't', 'versions'), { recursive: true });
    const report = await recoveryReport(root, 't');
    expect(report.latest_version).toBe(0);
    expect(report.account[0]).toMatch(/has no version/);
  });
});

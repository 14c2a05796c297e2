/**
 * The Node half of the UI's malformed-corpus test (test/renderer/malformed-corpus.test.tsx):
 * a directory of tasks mutated by the malformed-input scenario's generators, and a
 * real HostService over it, offered as the WaystationApi the renderer talks to,
 * through the same dispatch as both transports (inputs validated, errors typed).
 *
 * The renderer tests are type-checked for the browser, without Node's types, so
 * they load this module by path and see only the shared types below.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { HostService } from '../../electron/host/host-service.js';
import { openStore } from '../../electron/store/directory-store.js';
import type { ApiMethod, WaystationApi } from '../../shared/api/contract.js';
import { apiMethods } from '../../shared/api/api-methods.js';
import { dispatch } from '../../shared/api/dispatch.js';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { makeCheckpoint, withoutVersion } from '../electron/store/store-test-helpers.js';
import { Mutation, mutate, victimTask } from '../torture/scenarios/malformed-input.js';

export interface CorpusHost {
  api: WaystationApi;
  /** What listTasks answered once the directory was opened. */
  listed: TaskSummary[];
  /** Task id -> the mutation it went through, in words, for failure messages. */
  described: Map<string, string>;
  /** Leave a temp file of an interrupted save of version `version` in a task's versions/. */
  interruptSave(taskId: string, version: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Hot-snapshot damage with no version to stand in for it (the task's versions/
 * removed): each leaves the task unreadable, for this reason.
 */
export const LONE_DAMAGE: ReadonlyArray<readonly [Mutation['kind'], string]> = [
  ['truncate', 'truncated'],
  ['empty', 'truncated'],
  ['invalid-utf8', 'not-utf8'],
  ['deep-nesting', 'too-large'],
  ['symlink-cycle', 'unreadable'],
  ['symlink-outside', 'outside-root'],
  ['fifo', 'unreadable'],
  ['device-link', 'outside-root'],
];

/**
 * A directory of `sample` victims mutated by the corpus (ids `victim-<i>`), one
 * task per LONE_DAMAGE kind (`lone-<kind>`) and a healthy task at version 2.
 */
export async function openCorpusHost(sample: number, seed: number): Promise<CorpusHost> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-ui-corpus-'));
  const root = path.join(base, 'root');
  await fs.mkdir(root);
  const outside = path.join(base, 'outside.json');
  await fs.writeFile(outside, JSON.stringify({ secret: 'outside the root', schema_version: 2 }));
  const described = new Map<string, string>();
  for (const [i, m] of fc.sample(Mutation, { numRuns: sample, seed }).entries()) {
    await victimTask(root, `victim-${i}`);
    described.set(`victim-${i}`, await mutate(path.join(root, `victim-${i}`), outside, m));
  }
  for (const [kind] of LONE_DAMAGE) {
    const id = `lone-${kind}`;
    await victimTask(root, id);
    await fs.rm(path.join(root, id, 'versions'), { recursive: true });
    described.set(
      id,
      await mutate(path.join(root, id), outside, {
        target: 'checkpoint.json',
        kind,
        at: 0.5,
        value: null,
        depth: 5_000,
        bytes: new Uint8Array([0xff]),
      }),
    );
  }
  const healthy = (await openStore(root).create(makeCheckpoint('healthy'))).checkpoint;
  await openStore(root).save('healthy', { expectedVersion: 1, checkpoint: { ...withoutVersion(healthy), phase: 'two' } });

  const service = new HostService({ host: 'web', runner: null });
  await service.open(root);
  const api = Object.fromEntries(
    apiMethods.map((m: ApiMethod) => [m, (input: unknown) => dispatch(service, m, input)]),
  ) as unknown as WaystationApi;
  api.subscribe = (listener, lastEventId) => service.subscribe(listener, lastEventId);
  return {
    api,
    listed: await service.listTasks(),
    described,
    interruptSave: (taskId, version) =>
      fs.writeFile(
        path.join(root, taskId, 'versions', `.${String(version).padStart(8, '0')}.json.ab12cd.tmp`),
        '{"format":"waystation-ver',
      ),
    close: async () => {
      await service.close();
      await fs.rm(base, { recursive: true, force: true });
    },
  };
}

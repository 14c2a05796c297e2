/**
 * md-summarizer's publish step ends with the same result whether the POST
 * answered or a crash left the effect uncertain and the probe settled it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mdSummarizer } from '../../../electron/agents/md-summarizer.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { resumeTask, startTask } from '../../../electron/runtime/task-operations.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';

let service: FakePublishService;
let base: string;
beforeAll(async () => {
  service = await startFakePublishService();
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-md-outcome-'));
  await fs.mkdir(path.join(base, 'in'));
  await fs.writeFile(path.join(base, 'in', 'a.md'), '# Alpha\n\nAlpha is first.\n');
});
afterAll(async () => {
  await service.close();
  await fs.rm(base, { recursive: true, force: true });
});

async function publishedResult(root: string, taskId: string): Promise<unknown> {
  const store = openStore(root);
  const cp = (await store.getTask(taskId))!.checkpoint!;
  const step = cp.plan.find((s) => s.id === 'publish-index')!;
  return ((await store.readBlob(taskId, step.result_ref!)) as { published: unknown }).published;
}

describe('the publish-index result', () => {
  it('is the same after a probe settled a lost reply as after a plain POST', async () => {
    const env = (root: string) => ({ store: openStore(root), root, llm: new OfflineProvider(0), report: () => {} });
    const options = { input: path.join(base, 'in'), 'publish-url': service.url };

    const plainRoot = path.join(base, 'plain');
    await startTask(env(plainRoot), mdSummarizer, { taskId: 'plain-task', options });
    const plain = await publishedResult(plainRoot, 'plain-task');

    // The publication is applied but its reply lost: the step fails with the effect uncertain, and a resume probes it.
    const probedRoot = path.join(base, 'probed');
    service.failNext('drop-after-apply');
    const first = await startTask(env(probedRoot), mdSummarizer, { taskId: 'probed-task', options });
    expect(first.status).toBe('failed');
    const resumed = await resumeTask(env(probedRoot), mdSummarizer, 'probed-task', { trigger: 'human' });
    expect(resumed.status).toBe('done');
    const probed = await publishedResult(probedRoot, 'probed-task');

    // The service numbers publications and the key names the task: the rest must match exactly.
    const shape = (v: unknown, task: string) =>
      JSON.parse(
        JSON.stringify(v)
          .replaceAll(task, '<task>')
          .replace(/"pub-\d+"/g, '"pub-N"'),
      ) as unknown;
    expect(shape(probed, 'probed-task')).toEqual(shape(plain, 'plain-task'));
  });
});

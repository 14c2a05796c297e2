import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostService } from '../../../electron/host/host-service.js';
import { THREADS } from '../../support/langgraph-graphs.js';
import { fingerprint, scenarioDatabase } from '../../support/langgraph-sqlite.js';

let dir: string;
let file: string;
let service: HostService;

beforeAll(async () => {
  ({ dir, file } = await scenarioDatabase());
  service = new HostService({ host: 'web', runner: null });
  await service.open(file);
});

afterAll(async () => {
  await service?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const edit = { messages: [{ role: 'user', content: 'What is the weather in Quito?', id: 'edited' }] };

describe('editing the state of a LangGraph thread through the host', () => {
  it('tells a diff of two checkpoints in LangGraph words: messages added, next nodes', async () => {
    const diff = await service.diffVersions({ taskId: THREADS.weather, a: 2, b: 5 });
    expect(diff.langgraph).toBeDefined();
    expect(diff.langgraph!.messages_added.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(diff.langgraph!.messages_removed).toEqual([]);
    expect(diff.langgraph!.next).toEqual({ from: ['agent'], to: [] });
  });

  it('previews what it would write without changing a byte', async () => {
    const before = fingerprint(file);
    const plan = await service.previewThreadEdit({ taskId: THREADS.weather, version: 2, values: edit });
    expect(plan).toMatchObject({
      taskId: THREADS.weather,
      thread_id: THREADS.weather,
      parent: { version: 2 },
      step: 1,
      serde: 'json',
      channels: [{ name: 'messages', from: 2, to: 3 }],
      values: edit,
    });
    expect(fingerprint(file)).toEqual(before);
  });

  it('refuses a write for a checkpoint other than the one previewed, and bookkeeping channels, writing nothing', async () => {
    const before = fingerprint(file);
    await expect(
      service.editThreadState({ taskId: THREADS.weather, version: 2, values: edit, expectedCheckpointId: 'not-the-one' }),
    ).rejects.toMatchObject({ code: 'conflict' });
    await expect(service.previewThreadEdit({ taskId: THREADS.weather, version: 2, values: { __start__: 1 } })).rejects.toThrow(
      "LangGraph's own bookkeeping",
    );
    expect(fingerprint(file)).toEqual(before);
  });

  it('writes the new checkpoint, which History lists as an update from the version edited, and the diff tells apart', async () => {
    const plan = await service.previewThreadEdit({ taskId: THREADS.weather, version: 2, values: edit });
    const versionsBefore = (await service.getHistory({ taskId: THREADS.weather })).versions.length;
    const result = await service.editThreadState({
      taskId: THREADS.weather,
      version: 2,
      values: plan.values,
      expectedCheckpointId: plan.parent.checkpoint_id,
    });
    expect(result.version).toBe(versionsBefore + 1);
    expect(result.message).toContain('from version 2');
    const history = await service.getHistory({ taskId: THREADS.weather });
    expect(history.versions.at(-1)!.source).toMatchObject({ kind: 'human-edit', note: 'update, step 1, from version 2' });
    const messages = await service.getMessages({ taskId: THREADS.weather, version: result.version! });
    expect(messages.messages.map((m) => m.content)).toEqual(['What is the weather in Quito?']);
    const diff = await service.diffVersions({ taskId: THREADS.weather, a: 2, b: result.version! });
    expect(diff.langgraph!.messages_removed.map((m) => m.content)).toEqual(['What is the weather in Paris?']);
    expect(diff.langgraph!.messages_added.map((m) => m.content)).toEqual(['What is the weather in Quito?']);
  });
});

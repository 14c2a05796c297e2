/**
 * A command agent gets its options whatever their size: 200 KB of options,
 * more than one environment variable may hold on Linux (128 KiB), reach the
 * program through the file WAYSTATION_OPTIONS_FILE names, and that file is
 * gone once the program has exited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Runner } from '../../../electron/runtime/runner.js';
import { openStore } from '../../../electron/store/directory-store.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
let root: string;

const AGENT = `
import os, sys
import waystation
from waystation import PlannedStep

def run(t):
    t.step("measure", lambda: {"length": len(t.options["text"]), "file": os.environ.get("WAYSTATION_OPTIONS_FILE")})

agent = waystation.Agent(
    name="py-measure",
    description="measures its option",
    options={"type": "object", "properties": {"text": {"type": "string"}}},
    plan=[PlannedStep("measure", "measure", {"type": "object"})],
    goal=lambda o: "measure",
    run=run,
)
sys.exit(waystation.main(agent))
`;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-command-options-'));
  await fs.writeFile(path.join(root, 'measure.py'), AGENT);
  await fs.writeFile(
    path.join(root, 'waystation.config.json'),
    JSON.stringify({ agents: [{ name: 'py-measure', command: ['python3', 'measure.py'] }] }),
  );
});
afterAll(() => fs.rm(root, { recursive: true, force: true }));

describe('command agent options', () => {
  it('hands 200 KB of options to the program in a file, removed after it exits', async () => {
    const runner = new Runner({ root, env: { ...process.env, PYTHONPATH: path.join(repo, 'python') }, actor: 'tester' });
    const text = 'y'.repeat(200 * 1024);
    const outcome = await runner.startRun({ agent: 'py-measure', taskId: 'big', options: { text } });
    expect(outcome.message).not.toContain('E2BIG');
    expect(outcome.status).toBe('done');
    const value = (await readResult('big')) as { length: number; file: string };
    expect(value.length).toBe(text.length);
    await expect(fs.stat(value.file)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

/** The step result of `measure`, from the task's checkpoint. */
async function readResult(taskId: string): Promise<unknown> {
  const store = openStore(root);
  const cp = (await store.getTask(taskId))!.checkpoint!;
  const ref = cp.plan.find((s) => s.id === 'measure')!.result_ref!;
  return store.readBlob(taskId, ref);
}

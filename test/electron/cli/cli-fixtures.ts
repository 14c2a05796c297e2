/**
 * A checkpoint directory written by hand, file by file, as docs/FORMAT.md
 * describes it: native tasks with versions, both article formats side by side,
 * and a torn file. Written without the store so the CLI is tested against the
 * format, not against whatever the store happens to write.
 */
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FIRST_ARTICLE_TASK_JSON, SECOND_ARTICLE_CHECKPOINT_JSON } from '../../../shared/checkpoint/article-samples.js';
import { CURRENT_SCHEMA_VERSION, type CheckpointInput } from '../../../shared/checkpoint/schema.js';

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, JSON.stringify(value, null, 2));
}

/** Write a native task: every version as a full snapshot, the last one also as checkpoint.json. */
export async function writeNativeTask(root: string, versions: CheckpointInput[]): Promise<void> {
  const taskDir = path.join(root, versions[0].task_id);
  for (const cp of versions) {
    const name = String(cp.version).padStart(8, '0') + '.json';
    await writeJson(path.join(taskDir, 'versions', name), {
      format: 'waystation-version',
      version: cp.version,
      kind: 'full',
      checkpoint: cp,
    });
  }
  await writeJson(path.join(taskDir, 'checkpoint.json'), versions[versions.length - 1]);
}

/** Write the runner lease of a native task, as a live runner in this process would. */
export async function writeLiveLease(root: string, taskId: string): Promise<void> {
  const now = new Date().toISOString();
  await writeJson(path.join(root, taskId, 'lease', '1.json'), {
    owner: 'test-runner',
    pid: process.pid,
    hostname: os.hostname(),
    acquired_at: now,
    heartbeat_at: now,
    released: false,
  });
}

const REPORT_TEXT = '# Report\n\nAll good.\n';
/** The outline `report` records from version 2 on. */
export const OUTLINE_TEXT = '- intro\n- body\n';

/** Version `n` (1..3) of the `report` task: outline, then draft, then done. */
export function reportVersion(n: 1 | 2 | 3): CheckpointInput {
  const statuses: Record<number, ['done' | 'running' | 'pending', 'done' | 'running' | 'pending']> = {
    1: ['running', 'pending'],
    2: ['done', 'running'],
    3: ['done', 'done'],
  };
  const [s1, s2] = statuses[n];
  const artifacts: CheckpointInput['artifacts'] = [];
  if (n >= 2)
    artifacts.push({ type: 'file', path: 'out/outline.md', sha256: sha256(OUTLINE_TEXT), size: OUTLINE_TEXT.length, step_id: 'outline' });
  if (n >= 3)
    artifacts.push({ type: 'file', path: 'out/report.md', sha256: sha256(REPORT_TEXT), size: REPORT_TEXT.length, step_id: 'write' });
  return {
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: 'report',
    task_name: 'Quarterly report',
    version: n,
    status: n === 3 ? 'done' : 'running',
    phase: n === 3 ? 'done' : n === 2 ? 'writing' : 'outlining',
    goal: 'Write the quarterly report',
    plan: [
      { id: 'outline', name: 'Outline', status: s1, attempts: 1 },
      { id: 'write', name: 'Write', status: s2, attempts: n >= 2 ? 1 : 0 },
    ],
    current_step: n === 1 ? 0 : n === 2 ? 1 : 2,
    total_steps: 2,
    artifacts,
    side_effects: n >= 3 ? [{ id: 'notify', type: 'email', status: 'done', idempotency_key: 'report-notify' }] : [],
    resume_hint: n === 3 ? '' : 'continue the plan',
    recovery: { mode: 'manual', pending_approval: null },
    errors: [],
    run: {
      created_at: '2026-01-10T10:00:00Z',
      updated_at: `2026-01-10T10:0${n}:00Z`,
      model: 'offline',
      tokens_in: 100 * n,
      tokens_out: 10 * n,
      cost_usd: 0,
      elapsed_ms: 1000 * n,
    },
    source: { kind: 'runtime', actor: 'test' },
  };
}

/** A task whose checkpoint claims `running`. */
function runningTask(taskId: string): CheckpointInput {
  return {
    ...reportVersion(1),
    task_id: taskId,
    task_name: taskId,
  };
}

/**
 * The mixed directory:
 * - `report/`: native, versions 1..3, done, artifacts in `out/` intact;
 * - `drifted/`: native, done, its artifact rewritten since;
 * - `live/`: native, running, with a live lease; `stale/`: running, no lease;
 * - `legacy-001.json`: the first article's format;
 * - `article-two/checkpoint.json`: the second article's format, in a folder of its own;
 * - `torn/`: native, both files cut off mid-write.
 */
export async function writeMixedDirectory(root: string): Promise<void> {
  await fsp.mkdir(path.join(root, 'out'), { recursive: true });
  await fsp.writeFile(path.join(root, 'out', 'outline.md'), OUTLINE_TEXT);
  await fsp.writeFile(path.join(root, 'out', 'report.md'), REPORT_TEXT);
  await writeNativeTask(root, [reportVersion(1), reportVersion(2), reportVersion(3)]);

  const drifted = {
    ...reportVersion(3),
    task_id: 'drifted',
    artifacts: [{ type: 'file', path: 'out/drifted.md', sha256: sha256('as recorded'), size: 11 }],
  };
  await fsp.writeFile(path.join(root, 'out', 'drifted.md'), 'AS MODIFIED');
  await writeNativeTask(root, [{ ...drifted, version: 1 }]);

  await writeNativeTask(root, [runningTask('live')]);
  await writeLiveLease(root, 'live');
  await writeNativeTask(root, [runningTask('stale')]);

  await writeJson(path.join(root, 'legacy-001.json'), { ...FIRST_ARTICLE_TASK_JSON, task_id: 'legacy-001' });
  await writeJson(path.join(root, 'article-two', 'checkpoint.json'), SECOND_ARTICLE_CHECKPOINT_JSON);

  const torn = JSON.stringify({
    format: 'waystation-version',
    version: 1,
    kind: 'full',
    checkpoint: { ...reportVersion(1), task_id: 'torn' },
  });
  await fsp.mkdir(path.join(root, 'torn', 'versions'), { recursive: true });
  await fsp.writeFile(path.join(root, 'torn', 'versions', '00000001.json'), torn.slice(0, torn.length / 2));
  await fsp.writeFile(path.join(root, 'torn', 'checkpoint.json'), torn.slice(0, 40));
}

export async function makeTempDir(label: string): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), `waystation-cli-${label}-`));
}

/**
 * The demo checkpoint directory: generated on first start so the app shows
 * something real at once.
 *
 * Both built-in agents run for real (offline model, no network) to leave a
 * task in each state: done, failed, waiting for approval, drifted (an output
 * edited after the fact) and running: an auto-mode run cut off mid-step, as a
 * crash leaves it. Auto mode promises such a task carries on without a
 * human, so the host that opens the directory resumes it and it runs there
 * and then, from where it stopped, to done. Beside them sit one file in each
 * source article's format, which Waystation reads read-only.
 */
import { statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { builtInAgent } from '../agents/registry.js';
import { OfflineProvider } from '../llm/offline-provider.js';
import { LlmCallError, type ChatMessage, type Completion, type CompletionOptions, type LlmProvider } from '../llm/provider.js';
import { startTask, type OperationEnv } from '../runtime/task-operations.js';
import { trustDirectory } from '../runtime/directory-trust.js';
import { openStore } from '../store/directory-store.js';
import { folderNotMade } from '../store/disk-errors.js';
import { FIRST_ARTICLE_TASK_JSON, SECOND_ARTICLE_CHECKPOINT_JSON } from '../../shared/checkpoint/article-samples.js';
import { CURRENT_SCHEMA_VERSION, type CheckpointInput } from '../../shared/checkpoint/schema.js';

/** Written last: a directory without it is a generation that was cut short. */
const COMPLETE_MARKER = '.waystation-demo';

/**
 * How long the offline model takes to answer in a demo directory (the app or `serve`): slow enough
 * that the task resumed on opening can be watched running for a few seconds
 * (the offline model's default answers in a blink).
 */
export const DEMO_MODEL_LATENCY_MS = 2000;

/** Whether `root` is a complete generated demo directory. */
export function isDemoDirectory(root: string): boolean {
  try {
    return statSync(path.join(root, COMPLETE_MARKER)).isFile();
  } catch {
    return false;
  }
}

/**
 * The environment for task processes run in `root`: as given, except that in
 * a demo directory the offline model answers at the demo's pace unless
 * WAYSTATION_OFFLINE_LATENCY_MS already says otherwise. Decided per
 * directory, so the app and `serve` alike show the demo's running task running.
 */
export function demoRunEnv(root: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.WAYSTATION_OFFLINE_LATENCY_MS !== undefined && env.WAYSTATION_OFFLINE_LATENCY_MS !== '') return env;
  return isDemoDirectory(root) ? { ...env, WAYSTATION_OFFLINE_LATENCY_MS: String(DEMO_MODEL_LATENCY_MS) } : env;
}

export interface DemoResult {
  root: string;
  /** False when the directory already existed and was left untouched. */
  created: boolean;
  /** What the directory holds, one line per task, for the console. */
  tasks: string[];
}

const NOTES: Record<string, string> = {
  'checkpoints.md': '# Checkpoints\n\nA checkpoint records where a long task stands, so a crash costs one step, not the whole run.\n',
  'side-effects.md':
    '# Side effects\n\nAn effect is recorded before it is performed, with an idempotency key, so a resume never repeats it blindly.\n',
  'resume.md': '# Resume\n\nResuming loads the latest version, checks the world against it, and continues at the first unfinished step.\n',
};

function required(name: string) {
  const agent = builtInAgent(name);
  if (!agent) throw new Error(`the built-in agent ${name} is missing; the demo cannot be generated`);
  return agent;
}

/** A model that times out on the first call whose prompt contains `marker`, once: a transient failure. */
class TimesOutAt implements LlmProvider {
  readonly kind: string;
  readonly model: string;
  private failed = false;
  constructor(
    private readonly inner: LlmProvider,
    private readonly marker: string,
  ) {
    this.kind = inner.kind;
    this.model = inner.model;
  }
  complete(messages: ChatMessage[], opts?: CompletionOptions): Promise<Completion> {
    if (!this.failed && messages.at(-1)?.content.includes(this.marker)) {
      this.failed = true;
      return Promise.reject(
        new LlmCallError('the model call timed out after 30 s (a transient failure: a rerun gets an answer)', this.model, 0, [], 30_000),
      );
    }
    return this.inner.complete(messages, opts);
  }
}

/** Run with SKIP_FAILURE set as given: checkpoint-demo reads it at its third step. */
async function withSkipFailure<T>(skip: boolean, fn: () => Promise<T>): Promise<T> {
  const before = process.env.SKIP_FAILURE;
  if (skip) process.env.SKIP_FAILURE = '1';
  else delete process.env.SKIP_FAILURE;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.SKIP_FAILURE;
    else process.env.SKIP_FAILURE = before;
  }
}

/**
 * Generate the demo directory at `dir`, unless it already exists.
 *
 * Idempotent: an existing complete demo, or any other existing non-empty
 * folder, is left untouched. A demo whose generation was cut short (no
 * completion marker, only demo content) is generated again.
 */
export async function generateDemoDirectory(dir: string): Promise<DemoResult> {
  const root = path.resolve(dir);
  const existing = await fs.readdir(root).catch(() => null);
  if (existing) {
    if (existing.includes(COMPLETE_MARKER)) return { root, created: false, tasks: [] };
    if (existing.length > 0 && !existing.includes('.waystation-demo-partial')) {
      return { root, created: false, tasks: [] };
    }
    await fs.rm(root, { recursive: true, force: true });
  }
  await fs.mkdir(root, { recursive: true }).catch((err: unknown) => {
    throw folderNotMade(err, root, 'the demo directory');
  });
  await fs.writeFile(path.join(root, '.waystation-demo-partial'), 'generation in progress\n');
  const root_ = await fs.realpath(root);

  const store = openStore(root_);
  // No latency and no network: the offline model answers at once.
  const env: OperationEnv = { store, root: root_, llm: new OfflineProvider(0), actor: 'demo', report: () => {} };
  const demo = required('checkpoint-demo');
  const summarizer = required('md-summarizer');
  const tasks: string[] = [];
  const note = (id: string, what: string) => tasks.push(`${id.padEnd(28)} ${what}`);

  const notesDir = path.join(root_, 'notes');
  await fs.mkdir(notesDir, { recursive: true });
  for (const [name, text] of Object.entries(NOTES)) await fs.writeFile(path.join(notesDir, name), text);

  await withSkipFailure(true, () => startTask(env, demo, { taskId: 'demo-done', options: {} }));
  note('demo-done', 'checkpoint-demo, all four steps done');
  await withSkipFailure(false, () => startTask(env, demo, { taskId: 'demo-failed', options: {} }));
  note('demo-failed', 'checkpoint-demo, failed at step 3; resume with SKIP_FAILURE=1');
  // A model timeout at the last step is transient: the rerun a human approves finds the model answering and finishes the task.
  const flaky = (): OperationEnv => ({ ...env, llm: new TimesOutAt(env.llm!, 'Generate unit tests') });
  await withSkipFailure(true, () => startTask(flaky(), demo, { taskId: 'demo-waiting-approval', options: {}, mode: 'confirm' }));
  note('demo-waiting-approval', 'checkpoint-demo in confirm mode: the model timed out at step 4; approve the rerun and it finishes');
  await withSkipFailure(true, () => startTask(flaky(), demo, { taskId: 'demo-approval-to-reject', options: {}, mode: 'confirm' }));
  note('demo-approval-to-reject', 'the same, a second resume plan awaiting a decision (reject it to halt the task)');

  await startTask(env, summarizer, { taskId: 'notes-done', options: { input: notesDir } });
  note('notes-done', 'md-summarizer, every note summarised');
  await startTask(env, summarizer, { taskId: 'notes-drifted', options: { input: notesDir } });
  const drifted = await store.getTask('notes-drifted');
  const artifact = drifted?.checkpoint?.artifacts.find((a) => a.type === 'summary');
  if (artifact) {
    const file = path.isAbsolute(artifact.path) ? artifact.path : path.join(root_, artifact.path);
    await fs.appendFile(file, '\nEdited by hand after the run: the recorded hash no longer matches.\n');
  }
  note('notes-drifted', 'md-summarizer, a summary edited after the run (verify shows the drift)');

  await writeCutOffRun(store, notesDir);
  note('notes-running', 'md-summarizer cut off mid-run in auto mode: it resumes and runs when the directory is opened');

  await writeLegacyFiles(root_);
  note('legacy-task-001.json', "the first article's format (read-only until resumed)");
  note('article-two/checkpoint.json', "the second article's format (read-only)");

  await fs.writeFile(path.join(root_, COMPLETE_MARKER), 'generated by `waystation demo`; delete this folder to generate it again\n');
  // Waystation wrote every file of it, for the person who asked: its interrupted task may resume where it is opened.
  await trustDirectory(root_);
  await fs.rm(path.join(root_, '.waystation-demo-partial'), { force: true });
  return { root: root_, created: true, tasks };
}

/** An auto-mode md-summarizer run stopped in its second step, as a killed process leaves it. */
async function writeCutOffRun(store: ReturnType<typeof openStore>, notesDir: string): Promise<void> {
  const files = Object.keys(NOTES).sort();
  const at = new Date().toISOString();
  // As the agent records them: no output folder, the task's own (DIR/outputs/notes-running) found when it runs (md-summarizer.ts).
  const options = { input: notesDir };
  const output = 'outputs/notes-running';
  const plan: CheckpointInput['plan'] = [
    ...files.map((f) => ({ id: `summarize:${f}`, name: `summarize ${f}`, status: 'pending' as const, attempts: 0 })),
    { id: 'publish-index', name: 'write and publish the index', status: 'pending' as const, attempts: 0 },
  ];
  const base: Omit<CheckpointInput, 'version'> = {
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: 'notes-running',
    task_name: 'md-summarizer',
    status: 'running',
    phase: 'summarize',
    goal: `summarise the Markdown files of ${notesDir} and publish an index`,
    plan,
    current_step: 0,
    total_steps: plan.length,
    resume_hint: `start at ${plan[0].id}`,
    recovery: { mode: 'auto', pending_approval: null, decisions: [], auto_attempts: 0 },
    run: { created_at: at, updated_at: at, model: 'waystation-offline' },
    source: { kind: 'runtime', note: 'task created' },
    agent: { name: 'md-summarizer', options },
  };
  const v1 = await store.create(base);
  const step1 = `summarize:${files[0]}`;
  const summary = `In short, ${files[0]} explains why checkpoints matter.`;
  const runningPlan = plan.map((s, i) =>
    i === 0
      ? { ...s, status: 'done' as const, started_at: at, finished_at: at, attempts: 1 }
      : i === 1
        ? { ...s, status: 'running' as const, started_at: at, attempts: 1 }
        : s,
  );
  const running = { ...base, plan: runningPlan, current_step: 1, resume_hint: `${step1} is done; ${plan[1].id} was in progress` };
  await store.save('notes-running', {
    expectedVersion: v1.checkpoint.version,
    checkpoint: running,
    results: {
      [step1]: { file: files[0], summary_path: path.posix.join(output, files[0].replace(/\.md$/, '.summary.md')), summary },
    },
  });
}

/**
 * One task in each source article's format.
 *
 * The second article's artifact is left out: its file is not in the demo
 * folder, and a missing artifact would list the task as drifted.
 */
async function writeLegacyFiles(root: string): Promise<void> {
  const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';
  await fs.writeFile(path.join(root, 'legacy-task-001.json'), json({ ...FIRST_ARTICLE_TASK_JSON, task_id: 'legacy-task-001' }));
  await fs.mkdir(path.join(root, 'article-two'), { recursive: true });
  await fs.writeFile(path.join(root, 'article-two', 'checkpoint.json'), json({ ...SECOND_ARTICLE_CHECKPOINT_JSON, artifacts: [] }));
}

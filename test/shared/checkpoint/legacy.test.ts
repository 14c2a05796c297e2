import { describe, expect, it } from 'vitest';
import { Checkpoint } from '../../../shared/checkpoint/schema.js';
import {
  FIRST_ARTICLE_TASK_JSON as firstArticle,
  SECOND_ARTICLE_CHECKPOINT_JSON as secondArticle,
} from '../../../shared/checkpoint/article-samples.js';
import {
  convertArticleCheckpointJson,
  convertArticleTaskJson,
  convertLegacy,
  detectLegacyFormat,
} from '../../../shared/checkpoint/legacy.js';

const ctx = (taskId: string, location: string) => ({ taskId, location, fallbackTime: '2026-01-01T00:00:00.000Z' });

describe('detectLegacyFormat', () => {
  it('tells the two article formats apart and never claims a Waystation checkpoint', () => {
    expect(detectLegacyFormat(firstArticle)).toBe('article-task-json');
    expect(detectLegacyFormat(secondArticle)).toBe('article-checkpoint-json');
    expect(detectLegacyFormat({ ...secondArticle, schema_version: 2 })).toBeNull();
    expect(detectLegacyFormat({ name: 'package.json' })).toBeNull();
    expect(detectLegacyFormat([1, 2])).toBeNull();
  });
});

describe("the first article's <task_id>.json", () => {
  it('becomes a valid checkpoint: steps from the results keys, later steps pending, history returned aside', () => {
    const r = convertArticleTaskJson(firstArticle, ctx('demo-task-001', 'demo-task-001.json'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const cp = Checkpoint.parse(r.checkpoint);
    expect(cp.plan.map((s) => [s.id, s.name, s.status])).toEqual([
      ['step-1', '分析需求', 'done'],
      ['step-2', '编写代码', 'done'],
      ['step-3', 'step 3', 'pending'],
      ['step-4', 'step 4', 'pending'],
    ]);
    expect(cp.plan[1].result).toBe(firstArticle.results.编写代码);
    // Stopped at step 2 of 4 with no one holding it: recorded as running, so it is shown as interrupted.
    expect([cp.current_step, cp.total_steps, cp.status]).toEqual([2, 4, 'running']);
    expect(cp.goal).toBe('把下面的需求拆成子任务：写一个天气查询函数');
    expect(cp.run).toMatchObject({
      created_at: '2026-01-10 10:00:00',
      updated_at: '2026-01-10 10:01:30',
      elapsed_ms: 90_000,
      total_tokens: 1234,
    });
    expect(cp.source).toEqual({ kind: 'import', imported_from: { path: 'demo-task-001.json', format: 'article-task-json' } });
    expect(cp.history).toEqual({ count: 4, head: null });
    expect(r.messages).toEqual(firstArticle.history);
  });

  it('a finished task is done; missing timestamps fall back to the given time', () => {
    const { created_at: _c, updated_at: _u, ...rest } = firstArticle;
    const r = convertArticleTaskJson({ ...rest, current_step: 4 }, ctx('t', 't.json'));
    if (!r.ok) throw new Error(r.message);
    const cp = Checkpoint.parse(r.checkpoint);
    expect(cp.status).toBe('done');
    expect(cp.run.created_at).toBe('2026-01-01T00:00:00.000Z');
  });
});

describe("the second article's checkpoint.json", () => {
  it('becomes a valid checkpoint, marking what the article does not record', () => {
    const r = convertArticleCheckpointJson(secondArticle, ctx('agent-demo-2026-05-08-001', 'checkpoint.json'));
    if (!r.ok) throw new Error(r.message);
    const cp = Checkpoint.parse(r.checkpoint);
    expect(cp.plan.map((s) => s.status)).toEqual(['done', 'done', 'running', 'pending']);
    expect([cp.current_step, cp.total_steps, cp.phase, cp.version]).toEqual([2, 4, 'validate_tool_result', 3]);
    expect(cp.artifacts[0]).toMatchObject({
      sha256: '0'.repeat(64),
      sha256_unknown: true,
      legacy_sha256: '...',
      size: 0,
      size_unknown: true,
    });
    expect(cp.side_effects[0]).toMatchObject({
      id: 'effect:publish-agent-checkpoint-2026-05-08',
      status: 'not_started',
      type: 'git_commit',
    });
    expect(cp.resume_hint).toBe(secondArticle.resume_hint);
    expect(cp.run.updated_at).toBe(secondArticle.updated_at);
  });

  it('gives effects without id stable, unique ids, and maps unknown statuses safely', () => {
    const doc = {
      ...secondArticle,
      plan: [{ id: 'p1', name: 'x', status: 'blocked' }],
      side_effects: [
        { type: 'email', status: 'sent', idempotency_key: 'k' },
        { type: 'email', status: 'done', idempotency_key: 'k' },
        { type: 'http', status: 'done' },
      ],
    };
    const once = convertLegacy(doc, ctx('a', 'a/checkpoint.json'));
    const twice = convertLegacy(doc, ctx('a', 'a/checkpoint.json'));
    if (!once.ok || !twice.ok) throw new Error('conversion failed');
    const ids = once.checkpoint.side_effects!.map((e) => e.id);
    expect(ids).toEqual(['effect:k', 'effect:k#2', 'effect-3']);
    expect(twice.checkpoint.side_effects!.map((e) => e.id)).toEqual(ids);
    expect(once.checkpoint.side_effects![0]).toMatchObject({ status: 'uncertain', legacy_status: 'sent' });
    expect(once.checkpoint.plan[0]).toMatchObject({ status: 'pending', legacy_status: 'blocked' });
    expect(Checkpoint.safeParse(once.checkpoint).success).toBe(true);
  });

  it('keeps a real sha256 and size as given', () => {
    const hash = 'ab'.repeat(32);
    const r = convertArticleCheckpointJson(
      { ...secondArticle, artifacts: [{ type: 'file', path: 'a.md', sha256: hash, size: 12 }] },
      ctx('a', 'a'),
    );
    if (!r.ok) throw new Error(r.message);
    expect(r.checkpoint.artifacts![0]).toEqual({ type: 'file', path: 'a.md', sha256: hash, size: 12, status: 'written' });
  });
});

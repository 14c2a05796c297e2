/**
 * One checkpoint in each source article's format, as the article's own code
 * leaves it: the files Waystation reads read-only and imports on resume.
 *
 * Pure data, shared by the demo directory and the tests so that both speak of
 * the same documents. Vary a sample by spreading it and overriding fields;
 * the objects are read-only so that no caller changes them for the others.
 */

/**
 * The first article's `<task_id>.json` after two of its four steps.
 *
 * Its `results` are keyed by step name and hold what the model answered,
 * which is also what `history` records; `current_step` counts finished steps.
 */
export const FIRST_ARTICLE_TASK_JSON = {
  task_id: 'demo-task-001',
  current_step: 2,
  total_steps: 4,
  history: [
    { role: 'user', content: '把下面的需求拆成子任务：写一个天气查询函数' },
    { role: 'assistant', content: '模拟模型回答：拆成输入校验、调用天气接口、格式化输出三部分。' },
    { role: 'user', content: '根据子任务编写 Python 代码，注意边界情况' },
    { role: 'assistant', content: '模拟模型回答：def get_weather(city): ...' },
  ],
  results: {
    分析需求: '模拟模型回答：拆成输入校验、调用天气接口、格式化输出三部分。',
    编写代码: '模拟模型回答：def get_weather(city): ...',
  },
  created_at: '2026-01-10 10:00:00',
  updated_at: '2026-01-10 10:01:30',
  metrics: { total_tokens: 1234, elapsed_seconds: 90 },
} as const;

/**
 * The second article's `checkpoint.json`, as the article prints it.
 *
 * It has no `schema_version`, and its artifact's `sha256` is the placeholder
 * `...`, which the import marks as unknown rather than trusting.
 */
export const SECOND_ARTICLE_CHECKPOINT_JSON = {
  task_id: 'agent-demo-2026-05-08-001',
  version: 3,
  phase: 'validate_tool_result',
  goal: '生成一份可发布的技术文章并完成发布校验',
  plan: [
    { id: 'p1', name: 'select_topic', status: 'done' },
    { id: 'p2', name: 'draft_article', status: 'done' },
    { id: 'p3', name: 'run_checks', status: 'running' },
    { id: 'p4', name: 'publish', status: 'pending' },
  ],
  artifacts: [{ type: 'file', path: '_AI/2026-05-08-agent-checkpoint-recoverable-execution.md', sha256: '...', status: 'written' }],
  side_effects: [{ type: 'git_commit', status: 'not_started', idempotency_key: 'publish-agent-checkpoint-2026-05-08' }],
  resume_hint: '从 p3 继续：先做风格、隐私、签名检查，再进入发布阶段',
  updated_at: '2026-05-08T16:40:00+08:00',
} as const;

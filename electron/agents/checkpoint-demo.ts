/**
 * `checkpoint-demo`: the first article's four-step task (analyse the
 * requirement, write the code, check for errors, generate tests).
 *
 * The third step fails on purpose unless `SKIP_FAILURE=1`, so a second run
 * shows the point of checkpoints: it resumes at that step, not at step 1.
 */
import { z } from 'zod';
import { defineAgent } from '../runtime/define-agent.js';
import type { ChatMessage } from '../llm/provider.js';

const Options = z.object({
  requirement: z.string().min(1).default('write a function that looks up the weather for a city'),
});

const STEPS = [
  { id: 'analyse', name: 'analyse the requirement', prompt: (r: string) => `Break this requirement into sub-tasks: ${r}` },
  { id: 'write-code', name: 'write the code', prompt: () => 'Write the code for the sub-tasks above; handle the edge cases.' },
  { id: 'check-errors', name: 'check for errors', prompt: () => 'Check the code above for bugs and propose fixes.' },
  { id: 'generate-tests', name: 'generate tests', prompt: () => 'Generate unit tests for the code above.' },
] as const;

const StepOutput = z.string().min(1);

/** The step names of the first article's own demo, which wrote `<task_id>.json` files in this shape. */
const ARTICLE_STEP_NAMES = ['分析需求', '编写代码', '检查错误', '生成测试'];

/**
 * Whether a legacy task is clearly this demo's: the first article's format,
 * four steps, at least one of them named, and every named step in its place
 * (by the article's name, this demo's name or its id).
 */
function isArticleDemoTask(plan: ReadonlyArray<{ name: string }>): boolean {
  if (plan.length !== STEPS.length) return false;
  let named = 0;
  for (const [i, step] of plan.entries()) {
    if (step.name === `step ${i + 1}`) continue;
    if (![ARTICLE_STEP_NAMES[i], STEPS[i].name, STEPS[i].id].includes(step.name)) return false;
    named++;
  }
  return named > 0;
}

/** The failure the demo injects at its third step; exported so tests can recognise it. */
export const SIMULATED_FAILURE = 'simulated failure: the model call timed out (set SKIP_FAILURE=1 to let this step pass)';

export const checkpointDemo = defineAgent({
  name: 'checkpoint-demo',
  description: "The first article's four steps; fails at step 3 unless SKIP_FAILURE=1, then resumes there.",
  options: Options,
  goal: (o) => `${o.requirement}: analysed, written, checked and tested`,
  plan: () => STEPS.map((s) => ({ id: s.id, name: s.name, output_schema: StepOutput })),
  adoptLegacy: (cp, format) => (format === 'article-task-json' && isArticleDemoTask(cp.plan) ? { options: {} } : null),
  async run(ctx) {
    // The conversation so far is rebuilt from stored step results, so a resumed run sends the model what an uninterrupted one would.
    const history: ChatMessage[] = [];
    for (const s of STEPS) {
      const prompt = s.prompt(ctx.options.requirement);
      const output = await ctx.step(s.id, async () => {
        if (s.id === 'check-errors' && process.env.SKIP_FAILURE !== '1') throw new Error(SIMULATED_FAILURE);
        const reply = await ctx.llm.complete([...history, { role: 'user', content: prompt }]);
        return reply.text;
      });
      history.push({ role: 'user', content: prompt }, { role: 'assistant', content: output });
    }
  },
});

/**
 * The agent the runtime bench drives, written as an author writes one: with
 * the package's public API (defineAgent and the step context), nothing else.
 *
 * Each step asks the model (a provider that answers at once with the seeded
 * workload message, ~1 KiB) and returns the seeded step result (~0.3 KiB of
 * JSON, plus the step's id and counters): one message appended to the
 * history and one result stored, the same work per step as the store bench
 * and the LangGraph graph. The prompt is the step's id, so the user message
 * the runtime records beside the reply is small.
 */
import { defineAgent, z, type ChatMessage, type Completion, type LlmProvider } from '../../../electron/runtime/index.js';
import { workloadMessage, workloadResult, workloadStepId, type StepResult } from '../agent-workload.js';
import { msSince, nowNs } from '../timing.js';

/** What the agent measures of each step it runs. */
export interface StepTiming {
  /** ctx.step from call to return: the runtime's whole cost of the step (the agent's own work is precomputed). */
  stepMs: number;
  /** Inside the step function, outside the model call: the agent's own work. */
  agentMs: number;
}

/** A model that answers with the workload's message for the step, with no latency. */
export class WorkloadProvider implements LlmProvider {
  readonly kind = 'bench';
  readonly model = 'bench-model';
  private readonly replies: string[];

  constructor(seed: number, steps: number) {
    // Generated before the run, so the model's "work" is no part of a step's time.
    this.replies = Array.from({ length: steps + 1 }, (_, i) => workloadMessage(seed, i).content);
  }

  async complete(messages: ChatMessage[]): Promise<Completion> {
    const step = Number(/(\d+)$/.exec(messages[messages.length - 1]?.content ?? '')?.[1] ?? 0);
    const text = this.replies[step] ?? '';
    return { text, model: this.model, tokens_in: 20, tokens_out: 256, latency_ms: 0, retries: 0, retry_reasons: [] };
  }
}

/** The prompt of step `step`: its id, which is how the provider knows which reply to give. */
export function stepPrompt(step: number): string {
  return workloadStepId(step);
}

/**
 * An agent with a plan of `planSteps` steps that runs the first `steps` of
 * them, reporting each step's timing to `record`.
 */
export function benchAgent(opts: {
  seed: number;
  steps: number;
  planSteps: number;
  record: (t: StepTiming) => void;
  /** Awaited after each step, outside its timing: what the bench does beside the running task. */
  between?: (step: number) => Promise<void>;
}) {
  const results: StepResult[] = Array.from({ length: opts.steps + 1 }, (_, i) => workloadResult(opts.seed, i));
  return defineAgent({
    name: 'bench-agent',
    description: 'Asks the model once a step and stores a result, for the runtime benchmark.',
    options: z.object({}),
    goal: () => 'Work through the plan, one message and one result per step.',
    plan: () => Array.from({ length: opts.planSteps }, (_, i) => ({ id: workloadStepId(i + 1), name: `Step ${i + 1}` })),
    async run(ctx) {
      for (let step = 1; step <= opts.steps; step++) {
        let agentMs = 0;
        const started = nowNs();
        await ctx.step(workloadStepId(step), async () => {
          const reply = await ctx.llm.complete([{ role: 'user', content: stepPrompt(step) }]);
          const own = nowNs();
          const result = { ...results[step], reply_chars: reply.text.length };
          agentMs = msSince(own);
          return result;
        });
        opts.record({ stepMs: msSince(started), agentMs });
        await opts.between?.(step);
      }
    },
  });
}

/**
 * Real LangGraph runs that stop before they end, each in a process of its own
 * (the ones that are cut off kill that process), into a SQLite file or a
 * PostgreSQL database:
 *
 * - `breakpoint`: plan -> act compiled with `interruptBefore: ['act']`;
 *   LangGraph pauses before act and the process exits normally.
 * - `cut-off`: the same graph without the breakpoint; act kills the process.
 * - `after-plan`: plan returns, its writes are saved, and the process is
 *   killed before LangGraph saves the checkpoint after it.
 * - `parallel`: plan and research run in one step; plan returns (its writes
 *   saved) and research kills the process.
 * - `answered`: review calls `interrupt()`; a second process resumes it with
 *   a Command, and is killed inside review after it got the answer.
 * - `fails`: act throws.
 *
 * runStopped runs one in a child process (langgraph-stopped-run-child.ts);
 * the thread id is the scenario's name.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotation, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';

export const STOPPED_RUNS = ['breakpoint', 'cut-off', 'after-plan', 'parallel', 'answered', 'fails'] as const;
export type StoppedRun = (typeof STOPPED_RUNS)[number];

/** The state every graph here keeps: a log each node appends to, so a test can tell which nodes ran. */
export const RunState = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** End this process as a crash or `kill -9` would: nothing after it runs. */
export const kill = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: the process was killed');
};

/** plan -> act; `act` is given, so each scenario can make it stop differently. */
export function planThenAct(
  checkpointer: BaseCheckpointSaver,
  act: () => Promise<{ log: string[] }> | { log: string[] },
  opts: { interruptBefore?: string[] } = {},
) {
  return new StateGraph(RunState)
    .addNode('plan', () => ({ log: ['planned'] }))
    .addNode('act', act)
    .addEdge(START, 'plan')
    .addEdge('plan', 'act')
    .addEdge('act', END)
    .compile({ checkpointer, interruptBefore: opts.interruptBefore as never });
}

/** review asks a human with interrupt(), then records the answer. */
export function reviewGraph(checkpointer: BaseCheckpointSaver, afterAnswer: () => void = () => {}) {
  return new StateGraph(RunState)
    .addNode('draft', () => ({ log: ['drafted'] }))
    .addNode('review', () => {
      const answer = interrupt({ question: 'Send it?' }) as string;
      afterAnswer();
      return { log: [`answer: ${answer}`] };
    })
    .addEdge(START, 'draft')
    .addEdge('draft', 'review')
    .addEdge('review', END)
    .compile({ checkpointer });
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** Run `scenario` in a process of its own, writing to `location`; resolves once it ended, by itself or killed. */
export function runStopped(scenario: StoppedRun, location: string): void {
  try {
    execFileSync(
      process.execPath,
      [path.join(here, '../../bin/waystation-tsx.mjs'), path.join(here, 'langgraph-stopped-run-child.ts'), scenario, location],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 60_000,
      },
    );
  } catch (err) {
    if ((err as { signal?: string }).signal !== 'SIGKILL') throw err;
  }
}

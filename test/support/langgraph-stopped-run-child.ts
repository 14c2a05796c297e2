/**
 * One run of langgraph-stopped-run.ts, in this process:
 *   waystation-tsx test/support/langgraph-stopped-run-child.ts SCENARIO FILE_OR_URL
 * Exits 0 when the run stopped by itself; a cut-off run ends by SIGKILL.
 */
import { Command, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver, Checkpoint, CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { kill, planThenAct, reviewGraph, RunState, STOPPED_RUNS, type StoppedRun } from './langgraph-stopped-run.js';

/**
 * A saver that kills the process instead of saving the checkpoint of `step`,
 * once the node's writes (which LangGraph sends without waiting, so a
 * database may still be taking them) have had time to be saved.
 */
function killBeforeCheckpoint<T extends BaseCheckpointSaver>(saver: T, step: number): T {
  const put = saver.put.bind(saver);
  saver.put = async (config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, versions) => {
    if (metadata.step === step) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      kill();
    }
    return put(config, checkpoint, metadata, versions);
  };
  return saver;
}

async function saverFor(location: string): Promise<{ saver: BaseCheckpointSaver; close: () => Promise<void> }> {
  if (/^postgres(ql)?:\/\//.test(location)) {
    const saver = PostgresSaver.fromConnString(location);
    await saver.setup();
    return { saver, close: () => saver.end() };
  }
  const saver = SqliteSaver.fromConnString(location);
  return { saver, close: async () => (saver as unknown as { db: { close(): void } }).db.close() };
}

async function run(scenario: StoppedRun, location: string): Promise<void> {
  const { saver, close } = await saverFor(location);
  const config = { configurable: { thread_id: scenario } };
  const input = { log: ['go'] };
  switch (scenario) {
    case 'breakpoint':
      await planThenAct(saver, () => ({ log: ['acted'] }), { interruptBefore: ['act'] }).invoke(input, config);
      break;
    case 'cut-off':
      // act works a while (LangGraph saves the checkpoint before it meanwhile), then the process dies.
      await planThenAct(saver, async () => {
        await new Promise((resolve) => setTimeout(resolve, 500));
        return kill();
      }).invoke(input, config);
      break;
    case 'after-plan':
      // The checkpoint after step 1 (plan's) is the one never saved.
      await planThenAct(killBeforeCheckpoint(saver, 1), () => ({ log: ['acted'] })).invoke(input, config);
      break;
    case 'parallel': {
      const graph = new StateGraph(RunState)
        .addNode('plan', () => ({ log: ['planned'] }))
        .addNode('research', async () => {
          // Long enough for plan's writes to be saved.
          await new Promise((resolve) => setTimeout(resolve, 500));
          return kill();
        })
        .addNode('act', () => ({ log: ['acted'] }))
        .addEdge(START, 'plan')
        .addEdge(START, 'research')
        .addEdge(['plan', 'research'], 'act')
        .addEdge('act', END)
        .compile({ checkpointer: saver });
      await graph.invoke(input, config);
      break;
    }
    case 'answered':
      await reviewGraph(saver).invoke(input, config);
      await reviewGraph(saver, kill).invoke(new Command({ resume: 'yes' }), config);
      break;
    case 'fails':
      await planThenAct(saver, () => {
        throw new Error('the act API answered 503');
      })
        .invoke(input, config)
        .catch(() => {});
      break;
  }
  await close();
}

const [scenario, location] = process.argv.slice(2);
if (!STOPPED_RUNS.includes(scenario as StoppedRun) || !location) {
  process.stderr.write(`usage: langgraph-stopped-run-child.ts ${STOPPED_RUNS.join('|')} FILE_OR_URL\n`);
  process.exit(2);
}
await run(scenario as StoppedRun, location);

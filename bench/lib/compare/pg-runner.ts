/**
 * One runner of the PostgreSQL section's concurrency test, in a process of
 * its own (as a runner on a machine of its own: its own connections, its own
 * CPU time for encoding and diffing, not a share of one Node thread with the
 * other runners).
 *
 * Run: node bin/waystation-tsx.mjs bench/lib/compare/pg-runner.ts SIDE URL TASK STEPS SEED
 * (SIDE: waystation or langgraph). Creates its task (and takes its lease),
 * prints `{"type":"ready"}`, saves STEPS steps when a `go` line arrives on
 * stdin, prints `{"type":"done","startAt":...,"endAt":...,"cpuMs":...}` (wall
 * clock, ms since the epoch; the processor time the saves took, user and
 * system, ms) and exits.
 */
import readline from 'node:readline';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { openPostgresStore } from '../../../electron/store/postgres/postgres-store.js';
import { workloadMessage, workloadResult, workloadStepId } from '../agent-workload.js';
import { LangGraphThread } from './langgraph-side.js';
import { initialState, nextState } from './waystation-side.js';

const [side, url, taskId, stepsArg, seedArg] = process.argv.slice(2);
const steps = Number(stepsArg);
const seed = Number(seedArg);
if ((side !== 'waystation' && side !== 'langgraph') || !url || !taskId || !Number.isInteger(steps) || !Number.isInteger(seed)) {
  console.error('usage: pg-runner.ts waystation|langgraph URL TASK STEPS SEED');
  process.exit(2);
}

const go = new Promise<void>((resolve) => {
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'go') resolve();
  });
});
const now = () => performance.timeOrigin + performance.now();
const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

if (side === 'waystation') {
  const store = openPostgresStore(url);
  const created = await store.create({ ...initialState(steps), task_id: taskId }, { appendHistory: [workloadMessage(seed, 0)] });
  const lease = await store.acquireLease(taskId, { owner: 'bench', heartbeatMs: 0 });
  let current = created.checkpoint;
  process.stdout.write(`${JSON.stringify({ type: 'ready' })}\n`);
  await go;
  const startAt = now();
  const cpu = process.cpuUsage();
  for (let step = 1; step <= steps; step++) {
    const saved = await store.save(taskId, {
      expectedVersion: current.version,
      checkpoint: nextState(current, step, steps, seed),
      results: { [workloadStepId(step)]: workloadResult(seed, step) },
      appendHistory: [workloadMessage(seed, step)],
      lease,
    });
    current = saved.checkpoint;
  }
  const endAt = now();
  // Told before the connections close: the server's processes for them are counted while they still run.
  process.stdout.write(`${JSON.stringify({ type: 'done', startAt, endAt, cpuMs: cpuMsSince(cpu) })}\n`);
  await lease.release();
  await store.close();
} else {
  const saver = PostgresSaver.fromConnString(url);
  const thread = new LangGraphThread(saver, seed, false, taskId);
  await thread.putInput();
  process.stdout.write(`${JSON.stringify({ type: 'ready' })}\n`);
  await go;
  const startAt = now();
  const cpu = process.cpuUsage();
  for (let step = 1; step <= steps; step++) await thread.step(step);
  const endAt = now();
  process.stdout.write(`${JSON.stringify({ type: 'done', startAt, endAt, cpuMs: cpuMsSince(cpu) })}\n`);
  await saver.end();
}
process.exit(0);

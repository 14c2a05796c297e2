/**
 * `waystation tail DIR TASK [--from ID] [--follow]`: print a task's event log
 * from an event id (exclusive), as an SSE client resumes from Last-Event-ID.
 * With --follow it keeps printing while a runner holds the task's lease.
 */
import type { Command } from 'commander';
import type { TaskEvent } from '../../store/store-types.js';
import { requireTask, UsageError, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { inlineJson } from '../output.js';

function render(e: TaskEvent): string {
  const what = e.type === 'version' ? `version ${e.version}` : e.type;
  const data = e.data ? ` ${inlineJson(e.data, 160)}` : '';
  return `${String(e.id).padStart(5)} ${e.at} ${what}${e.step_id ? ` ${e.step_id}` : ''}${data}`;
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('tail')
    .description("print a task's events from an id; --follow keeps going while the task runs")
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .option('--from <ID>', 'print events after this id (like Last-Event-ID)', '0')
    .option('--follow', 'keep printing while a runner holds the task')
    .option('--json', 'one JSON event a line')
    .action(async (dir: string, taskId: string, opts: { from: string; follow?: boolean; json?: boolean }) => {
      const from = Number(opts.from);
      if (!Number.isInteger(from) || from < 0) throw new UsageError(`--from must be an event id (0, 1, 2, ...), not "${opts.from}"`);
      const { store } = await requireTask(ctx, dir, taskId);
      const print = (e: TaskEvent) => ctx.io.out(opts.json ? `${JSON.stringify(e)}\n` : `${render(e)}\n`);
      let last = from;
      const drain = async () => {
        for (const e of await store.readEvents(taskId, last)) {
          if (ctx.io.outClosed?.()) return;
          print(e);
          last = e.id;
        }
      };
      await drain();
      if (!opts.follow) return;
      // Keep following while someone drives the task and someone reads; one more read after the lease goes catches
      // the final events.
      while (!ctx.io.outClosed?.() && (await store.readLease(taskId)).info.held) {
        await new Promise((r) => setTimeout(r, 250));
        await drain();
      }
      await drain();
    });
}

/**
 * Ctrl-C (SIGINT), SIGTERM or the terminal closed (SIGHUP) while a command drives a task through a runner.
 *
 * A terminal sends Ctrl-C to its whole foreground process group. Were the
 * worker running the agent in it, both would end on the spot, mid-step or
 * mid-effect, with no word on what to do next. The runner's children run in a
 * group of their own (worker-launch.ts, RUN_APART), so the key reaches the
 * CLI alone, which asks the run to stop the way `waystation stop` does,
 * through the store: at its next step or effect the worker saves a
 * `stop` version and lets the lease go, and the command ends as a stopped
 * run does (exit 8, with the command that continues). A step can take long (a
 * model call), so a second signal ends the worker's process now, as
 * `stop --force` does; a third ends the command at once.
 */
import type { Runner, RunOutcome } from '../runtime/runner.js';
import type { CliContext } from './cli-context.js';
import { messageOf } from '../../shared/api/error-codes.js';

/** Run `work`, the command's drive of a task through `runner`, stopping that task as above on Ctrl-C, SIGTERM or SIGHUP. */
export async function stoppableRun(ctx: CliContext, runner: Runner, work: () => Promise<RunOutcome>): Promise<RunOutcome> {
  const { onSignal } = ctx.io;
  if (!onSignal) return work();
  // The tasks this command's workers drive, as the runner names them when it starts one (a start may make its id).
  // Until the first is handed to a worker nothing has run, and a signal ends the command as it always did.
  const driven = new Set<string>();
  let offSignal = null as (() => void) | null;
  let signals = 0;
  let asking: Promise<void> = Promise.resolve();
  const offEvents = runner.onEvent((e) => {
    if (e.type !== 'spawned') return;
    driven.add(e.taskId);
    offSignal ??= onSignal(() => {
      const force = ++signals >= 2;
      // After the second, signals are the process's own again: a third ends the command at once.
      if (force) offSignal?.();
      // A stop that cannot be asked (the store out of reach) is said; the run's own outcome still ends the command.
      asking = asking
        .then(() => ask(ctx, runner, [...driven], force))
        .catch((err: unknown) => ctx.io.err(ctx.errStyle.red(`waystation: could not ask the run to stop: ${messageOf(err)}`) + '\n'));
    });
  });
  try {
    const outcome = await work();
    await asking;
    return outcome;
  } finally {
    offSignal?.();
    offEvents();
  }
}

async function ask(ctx: CliContext, runner: Runner, taskIds: readonly string[], force: boolean): Promise<void> {
  const reason = 'interrupted at the terminal';
  for (const taskId of taskIds) {
    ctx.io.err(
      force
        ? `\nwaystation: ending the process that runs ${taskId} (an effect it had in flight is checked when it is resumed)\n`
        : `\nwaystation: stopping ${taskId} at its next step or effect (Ctrl-C again ends it now)\n`,
    );
    const asked = await runner.stop(taskId, force ? { force: true, reason } : { waitMs: 0, reason });
    // A task its worker had not written yet has nothing to stop: the run's own outcome says how it ended.
    if (asked.error && asked.error !== 'not-found') ctx.io.err(ctx.errStyle.red(`waystation: ${asked.message}`) + '\n');
  }
  // A worker that had not taken its task's lease is not one a stop reaches: a forced stop ends it too.
  if (force) runner.killAll('SIGTERM');
}

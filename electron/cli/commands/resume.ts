/**
 * `waystation resume DIR TASK`: resume a task in a worker process, following
 * the six steps (load, verify the outside world, find the next step, reconcile
 * uncertain effects, rebuild the context, continue). In confirm mode it
 * prepares a resume plan and waits for `approve`.
 */
import type { Command } from 'commander';
import { requireTask, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { addTrustOption, requireTrust } from '../trust-check.js';
import { stoppableRun } from '../interrupt.js';
import { cliRunner, reportOutcome, RUN_EXIT_HELP, streamRunner } from './run.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command, ctx: CliContext): void {
  const command = program
    .command('resume')
    .description('resume an interrupted, failed or waiting task from its latest version')
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .option('--rerun-drifted', 'regenerate drifted artifacts by rerunning the steps that made them')
    .option('--effect-happened <KEY>', 'an uncertain side effect without a probe did happen (repeatable)', collect)
    .option(
      '--effect-not-happened <KEY>',
      'an uncertain side effect without a probe did not happen: retry it with the same key (repeatable)',
      collect,
    )
    .option('--note <TEXT>', 'passed to a step that waits for a human')
    .option('--by <NAME>', 'who is resuming')
    .option('--json', 'print the outcome as JSON')
    .addHelpText('after', RUN_EXIT_HELP);
  addTrustOption(command).action(
    async (
      dir: string,
      taskId: string,
      opts: {
        rerunDrifted?: boolean;
        effectHappened?: string[];
        effectNotHappened?: string[];
        note?: string;
        by?: string;
        json?: boolean;
        trust?: boolean;
      },
    ) => {
      const { root, store } = await requireTask(ctx, dir, taskId);
      // The code that runs lives in the artifact folder: the directory itself, or for a database the folder the command runs in.
      await requireTrust(ctx, store.artifactRoot, {
        trust: opts.trust,
        command: 'resume',
        extra: [`task ${taskId}, resumed with its agent`],
      });
      const settle: Record<string, boolean> = {};
      for (const k of opts.effectHappened ?? []) settle[k] = true;
      for (const k of opts.effectNotHappened ?? []) settle[k] = false;
      const runner = cliRunner(ctx, root, opts.by);
      streamRunner(ctx, runner, Boolean(opts.json));
      const outcome = await stoppableRun(ctx, runner, () =>
        runner.resume(taskId, { rerunDrifted: opts.rerunDrifted, settle, note: opts.note }),
      );
      reportOutcome(ctx, dir, outcome, Boolean(opts.json));
    },
  );
}

/**
 * `waystation run DIR AGENT [--task ID] [--mode manual|auto|confirm] [agent options]`:
 * start a task of a built-in agent (or a module path) in its own worker process.
 *
 * Options the command does not know are the agent's (`--input FOLDER`,
 * `--publish-url URL`), validated by the agent's schema. Given an existing
 * task id, it resumes that task instead, as re-running the article's demo does.
 */
import { promises as fs } from 'node:fs';
import { fillDirectory, shellWord } from '../../../shared/checkpoint/fill-directory.js';
import type { Command } from 'commander';
import { isPostgresUrl } from '../../store/postgres/redact-url.js';
import { RecoveryMode } from '../../../shared/checkpoint/schema.js';
import { refusedOutcome, Runner, type RunOutcome } from '../../runtime/runner.js';
import { RunExit } from '../../runtime/worker-protocol.js';
import { DEFAULT_MAX_AUTO_ATTEMPTS } from '../../runtime/task-operations.js';
import { builtInAgents } from '../../agents/registry.js';
import { isModuleSpecifier } from '../../runtime/agent-loader.js';
import { agentNotFound, readAgentsConfig } from '../../runtime/agent-catalog.js';
import { UsageError, shownLocation, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { addTrustOption, requireTrust, trustIfEmpty } from '../trust-check.js';
import { directoryToMake } from '../directory-argument.js';
import { stoppableRun } from '../interrupt.js';
import { colorStatus, formatJson } from '../output.js';
// Provides the built-in agents to the runtime this command drives (see runtime/built-in-agents.ts).
import '../../agents/registry.js';

export const RUN_EXIT_HELP = `
Exit status:
  0  the task is done (or the edit/rejection was written)
  1  the task failed: the message says what to fix; then \`waystation resume\`. Also a start that
     stored nothing because the store could not be written (the database went away, a disk error):
     there is no task to resume; start it again
  2  bad input: unknown task or step, invalid value or options, no pending approval,
     a task this build must not write (future schema, legacy format); nothing was written
  3  the task waits for a human (drift, an uncertain effect without a probe, waitForHuman)
  4  the task waits for approval of a resume plan (confirm mode)
  5  the task is halted (its resume plan was rejected)
  6  another runner holds the task's lease; nothing was written
  7  the agent process crashed or was killed, or the database went away (or refused) under the run
     after the task was stored; the task is interrupted and can be resumed
  8  a person stopped the run (waystation stop, or Ctrl-C here: the run stops at its next step
     or effect, a second Ctrl-C ends it now); the task is interrupted and can be resumed`;

/** The exit codes of the commands that write a version in this process and run no agent (edit, reject, stop, fork, rewind). */
export const OPERATION_EXIT_HELP = `
Exit status:
  0  written (stop: the run stopped, was asked to, or the stop was recorded)
  1  the store could not be written (a disk or database error); the message says what was left as it was
  2  bad input: unknown task, step or version, invalid value or options, a task this build must not write;
     nothing was written
  6  another runner holds the task's lease (stop: it runs on another machine); nothing was written`;

/** Parse `--name value`, `--name=value` and bare `--flag` into agent options. */
export function parseAgentOptions(args: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument "${a}": agent options are written --name value`);
    const eq = a.indexOf('=');
    if (eq > 2) {
      out[a.slice(2, eq)] = a.slice(eq + 1);
    } else if (i + 1 < args.length && !args[i + 1].startsWith('--')) {
      out[a.slice(2)] = args[++i];
    } else {
      out[a.slice(2)] = true;
    }
  }
  return out;
}

/** The options' defaults, which the command to start a task again leaves out as a person would. */
const DEFAULT_MODE = 'manual';
const DEFAULT_MAX_ATTEMPTS = String(DEFAULT_MAX_AUTO_ATTEMPTS);

/**
 * This `waystation run` as it was given, without its password and `--task` (the runner adds the id it starts): what
 * a start the database failed before it stored anything says to run again.
 */
function startAgainCommand(
  dir: string,
  agent: string,
  agentArgs: readonly string[],
  opts: { mode: string; maxAttempts: string; export?: string; by?: string },
): string {
  const words = ['waystation', 'run', shownLocation(dir), agent];
  if (opts.mode !== DEFAULT_MODE) words.push('--mode', opts.mode);
  if (opts.maxAttempts !== DEFAULT_MAX_ATTEMPTS) words.push('--max-attempts', opts.maxAttempts);
  if (opts.export !== undefined) words.push('--export', opts.export);
  if (opts.by !== undefined) words.push('--by', opts.by);
  return [...words, ...agentArgs].map(shellWord).join(' ');
}

/** Print a runner's worker output as it comes. */
export function streamRunner(ctx: CliContext, runner: Runner, json: boolean): void {
  runner.onEvent((e) => {
    if (json) return;
    if (e.type === 'line') (e.stream === 'stdout' ? ctx.io.out : ctx.io.err)(`  ${e.line}\n`);
    else if (e.type === 'retrying')
      ctx.io.out(ctx.style.dim(`  auto mode: resuming ${e.taskId} in ${e.delayMs} ms (attempt ${e.attempt})\n`));
  });
}

/** Print how an operation ended and what to do next; set the exit code. */
export function reportOutcome(ctx: CliContext, dir: string, outcome: RunOutcome, json: boolean): void {
  const shown = shownLocation(dir);
  // Quoted for a shell where it must be, so the command printed runs as it is pasted.
  const fill = (s: string) => fillDirectory(s, shown);
  if (json) {
    ctx.io.out(formatJson({ ...outcome, message: fill(outcome.message), next: outcome.next ? fill(outcome.next) : null }));
  } else if (outcome.error) {
    ctx.io.err(ctx.errStyle.red(`waystation: ${fill(outcome.message)}`) + '\n');
  } else {
    const status = shownStatus(outcome);
    ctx.io.out(
      `${ctx.style.bold(outcome.task_id)} ${colorStatus(ctx.style, status)}${outcome.version ? ctx.style.dim(` (version ${outcome.version})`) : ''}\n`,
    );
    ctx.io.out(`${fill(outcome.message)}\n`);
    if (outcome.next) ctx.io.out(`next: ${fill(outcome.next)}\n`);
  }
  ctx.fail(outcome.exitCode);
}

/**
 * The status the line names, as the task list would show it: a run that crashed, or that a person stopped and no
 * run drives any more, leaves its task interrupted (stored as running, with no lease held). A stop that only asked
 * (`stop --wait 0`) leaves the run going.
 */
function shownStatus(outcome: RunOutcome & { how?: string }): string {
  if (outcome.crashed) return 'interrupted';
  if (outcome.stopped && outcome.status === 'running' && outcome.how !== 'requested') return 'interrupted';
  return outcome.status ?? 'unknown';
}

/** The runner a command uses: the CLI's store, this process's environment. */
export function cliRunner(ctx: CliContext, root: string, actor?: string): Runner {
  return new Runner({ root, openStore: (r) => ctx.openStore(r), actor });
}

export function register(program: Command, ctx: CliContext): void {
  const command = program
    .command('run')
    .description('start a task of an agent in its own process (unknown --options go to the agent)')
    .argument('<DIR>', `${STORE_ARGUMENT} (a directory is created if missing, a database's schema on first use)`)
    .argument(
      '<AGENT>',
      'a built-in agent (checkpoint-demo, md-summarizer), an agent registered in DIR/waystation.config.json, or a module path (./agent.ts)',
    )
    .argument('[agent-options...]', "the agent's own options, e.g. --input FOLDER --publish-url URL")
    .option('--task <ID>', 'the task id (default: agent name, date and a short random suffix); an existing task is resumed')
    .option('--mode <MODE>', 'recovery mode: manual, auto or confirm', DEFAULT_MODE)
    .option('--max-attempts <N>', 'auto mode: how many times to resume by itself', DEFAULT_MAX_ATTEMPTS)
    .option('--export <NAME>', 'the export holding the agent in a module (default: the default export)')
    .option('--by <NAME>', 'who is acting (recorded with decisions)')
    .option('--json', 'print the outcome as JSON')
    .allowUnknownOption()
    .addHelpText('after', RUN_EXIT_HELP);
  addTrustOption(command).action(
    async (
      dir: string,
      agent: string,
      agentArgs: string[],
      opts: { task?: string; mode: string; maxAttempts: string; export?: string; by?: string; json?: boolean; trust?: boolean },
    ) => {
      const mode = RecoveryMode.safeParse(opts.mode);
      if (!mode.success) throw new UsageError(`--mode must be manual, auto or confirm, not "${opts.mode}"`);
      const max = Number(opts.maxAttempts);
      if (!Number.isSafeInteger(max) || max < 0)
        throw new UsageError(`--max-attempts must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, not "${opts.maxAttempts}"`);
      const location = isPostgresUrl(dir) ? dir : directoryToMake(dir);
      // A directory this command makes and the start then leaves empty (an unknown agent, an option missing) is taken
      // away again: a mistyped command leaves nothing behind. rmdir takes only an empty folder.
      const madeHere =
        !isPostgresUrl(dir) &&
        (await fs.lstat(location).then(
          () => false,
          (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
        ));
      try {
        const store = ctx.openStore(location);
        // A directory is made on first use, a database's schema too (as `waystation db init` would).
        await store.prepareForWrites();
        // The code that runs lives in the artifact folder: the directory itself, or for a database the folder the command runs in.
        const root = store.artifactRoot;
        // A built-in or a module named on this command line is the person's own choice; an agent the
        // directory registers, or a task of it resumed, is code from the directory.
        const resumes = opts.task !== undefined && (await store.getTask(opts.task).catch(() => null)) !== null;
        // A name nothing registers is said as such (reading the configuration runs nothing), not as a question of trust.
        const notFound =
          resumes || builtInAgents.has(agent) || isModuleSpecifier(agent) ? null : agentNotFound(agent, await readAgentsConfig(root));
        if (notFound) return reportOutcome(ctx, dir, refusedOutcome(opts.task ?? '', 'invalid', notFound), Boolean(opts.json));
        if (resumes || (!builtInAgents.has(agent) && !isModuleSpecifier(agent))) {
          await requireTrust(ctx, root, {
            trust: opts.trust,
            command: 'run',
            extra: resumes ? [`task ${opts.task}, resumed with its agent`] : [`the agent "${agent}" it registers`],
          });
        } else if (opts.trust) {
          await requireTrust(ctx, root, { trust: true, command: 'run' });
        } else {
          await trustIfEmpty(root);
        }
        const runner = cliRunner(ctx, location, opts.by);
        streamRunner(ctx, runner, Boolean(opts.json));
        const options = parseAgentOptions(agentArgs);
        const outcome = await stoppableRun(ctx, runner, () =>
          runner.startRun({
            agent,
            options,
            taskId: opts.task,
            mode: mode.data,
            maxAutoAttempts: max,
            exportName: opts.export,
            startAgain: startAgainCommand(dir, agent, agentArgs, opts),
          }),
        );
        reportOutcome(ctx, dir, outcome, Boolean(opts.json));
        if (outcome.exitCode === RunExit.done && !opts.json)
          ctx.io.out(ctx.style.dim(`inspect: waystation show ${shellWord(shownLocation(dir))} ${shellWord(outcome.task_id)}\n`));
      } finally {
        if (madeHere) await fs.rmdir(location).catch(() => {});
      }
    },
  );
}

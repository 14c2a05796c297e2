/**
 * Learn what an agent module is (its name, description, options schema and
 * hash) by loading it in a short-lived worker process, so a module that
 * throws, calls process.exit or never finishes loading cannot harm the host
 * that asked.
 */
import { handJob, JOB_VIA_IPC_ENV } from './worker-job-channel.js';
import { fork } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { agentLoadTimeoutMs } from './agent-loader.js';
import { defaultWorkerLaunch, type WorkerLaunch } from './worker-launch.js';
import type { DescribedAgent, WorkerMessage } from './worker-protocol.js';
import { ServiceError } from '../../shared/api/error-codes.js';

/** A module that could not be described: `message` says which file and why. */
export class AgentDescribeError extends ServiceError {
  readonly code = 'agent-unavailable';
}

export interface DescribeRequest {
  /** The checkpoint directory (the worker's store root; nothing is written to it). */
  root: string;
  /** The module path, relative to `cwd` or absolute. */
  spec: string;
  cwd: string;
  exportName?: string;
  /** Record the module relative to this folder instead of the module's own project. */
  projectRoot?: string;
}

export interface DescribeOptions {
  env?: NodeJS.ProcessEnv;
  workerLaunch?: WorkerLaunch;
}

/** Extra time the worker gets past its own load timeout before it is killed (start-up of Node and tsx); a short timeout gets a short margin. */
export function killMarginMs(loadMs: number): number {
  return Math.min(10_000, loadMs);
}

/**
 * Load an agent module in a worker and describe it.
 *
 * Rejects with an {@link AgentDescribeError} when the module is missing,
 * throws on load, exports no agent, or hangs past the load timeout.
 */
export function describeAgentModule(req: DescribeRequest, opts: DescribeOptions = {}): Promise<DescribedAgent> {
  const env = opts.env ?? process.env;
  const { entry, execArgv = [] } = opts.workerLaunch ?? defaultWorkerLaunch();
  const loadMs = agentLoadTimeoutMs(env);
  return new Promise((resolve, reject) => {
    const child = fork(entry, [], {
      execArgv,
      env: { ...env, [JOB_VIA_IPC_ENV]: '1' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      cwd: req.cwd,
    });
    handJob(child, { kind: 'describe', taskId: '', ...req });
    let stderr = '';
    child.stdout?.resume();
    child.stderr?.on('data', (b: Buffer) => {
      if (stderr.length < 4000) stderr += b.toString('utf8');
    });
    let message: WorkerMessage | null = null;
    let timedOut = false;
    // A module stuck in a busy loop never lets the worker's own timer fire: the kill is the backstop.
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGKILL');
      },
      loadMs + killMarginMs(loadMs),
    );
    child.on('message', (m) => {
      message = m as WorkerMessage;
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new AgentDescribeError(`could not start a worker to load ${req.spec}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const m = message as WorkerMessage | null;
      if (m?.type === 'agent') {
        recordableProjectRoot(m.agent.project_root, req.root, req.cwd).then(
          (project_root) => resolve({ ...m.agent, project_root }),
          () => resolve(m.agent),
        );
        return;
      }
      if (m?.type === 'error') return reject(new AgentDescribeError(m.message));
      if (timedOut)
        return reject(
          new AgentDescribeError(`the agent module ${req.spec} did not finish loading within ${loadMs} ms (it hangs at start-up)`),
        );
      const last = stderr.trim().split('\n').slice(-3).join(' ');
      reject(
        new AgentDescribeError(
          `loading the agent module ${req.spec} ended the process (${signal ? `signal ${signal}` : `exit code ${code}`})${last ? `: ${last}` : ''}`,
        ),
      );
    });
  });
}

/** `..` segments only (or nothing): the path of a folder that contains the one it is relative to. */
const ANCESTOR = /^(?:\.\.(?:\/\.\.)*)?$/;

/**
 * The `project_root` to record for a module agent: relative to the checkpoint
 * root (`.`, `..`, `../..`) when the project contains that root, so the two
 * can move together; absolute otherwise (a project beside the directory, or
 * one reached through a symbolic link, where `..` would lead elsewhere).
 *
 * Readers resolve a recorded `project_root` against the root, so both forms,
 * and the absolute ones older versions recorded, keep working.
 */
export async function recordableProjectRoot(projectRoot: string, root: string, cwd: string = root): Promise<string> {
  const project = path.resolve(cwd, projectRoot);
  const lexical = path.relative(path.resolve(root), project).split(path.sep).join('/');
  if (!ANCESTOR.test(lexical)) return project;
  // Readers may open the root by its real path (the app does): `..` must name the same folder both ways.
  const [realRoot, realProject] = await Promise.all([fs.realpath(root), fs.realpath(project)]);
  const real = path.relative(realRoot, realProject).split(path.sep).join('/');
  return real === lexical ? lexical || '.' : project;
}

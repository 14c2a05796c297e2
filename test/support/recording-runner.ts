/**
 * A HostRunner that runs nothing and records each action it is asked for,
 * with the task the action names: a test checks that a request reached it,
 * or that a refused one never did.
 */
import type { ActionResult } from '../../shared/api/contract.js';
import type { HostRunner } from '../../electron/host/host-service.js';

export interface RecordedAction {
  what: 'start' | 'resume' | 'approve' | 'reject' | 'edit' | 'stop' | 'fork' | 'rewind' | 'registeredAgents' | 'recoverInterrupted';
  /** The task id the action named (a start's requested id; '' when none). */
  taskId: string;
}

/**
 * `agentCode`: also answer the listing of registered agents (none) and the
 * start-up recovery, recording both: each would load agent modules.
 */
export function recordingRunner(calls: RecordedAction[], opts: { agentCode?: boolean } = {}): HostRunner {
  const record =
    (what: RecordedAction['what']) =>
    async (_root: string, task: unknown): Promise<ActionResult> => {
      const taskId = typeof task === 'string' ? task : String((task as { taskId?: string } | undefined)?.taskId ?? '');
      calls.push({ what, taskId });
      return { taskId, version: null, message: `${what} recorded` };
    };
  return {
    start: record('start'),
    resume: record('resume'),
    approve: record('approve'),
    reject: record('reject'),
    edit: record('edit'),
    stop: record('stop'),
    fork: record('fork'),
    rewind: record('rewind'),
    ...(opts.agentCode
      ? {
          registeredAgents: async () => (calls.push({ what: 'registeredAgents', taskId: '' }), []),
          recoverInterrupted: async () => void calls.push({ what: 'recoverInterrupted', taskId: '' }),
        }
      : {}),
    onEvent: () => () => {},
    shutdown: async () => {},
  };
}

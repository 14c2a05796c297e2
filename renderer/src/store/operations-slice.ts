import { validateAgainstSchema } from '../../../shared/checkpoint/output-schema.js';
import type { OperationsSlice, Slice, Store } from './store-types.js';
import { errorIssues, errorText } from './error-text.js';
import { fillDirectory } from '../../../shared/checkpoint/fill-directory.js';

/** Actions that change a task through the host, with progress and notices. */
export const createOperationsSlice: Slice<OperationsSlice> = (set, get) => {
  let noticeId = 0;

  /** Run `work` with a busy marker under `key`; report failure as a notice. */
  async function track<T>(key: string, label: string, work: () => Promise<T>): Promise<T | undefined> {
    set({ busy: { ...get().busy, [key]: label } });
    try {
      return await work();
    } catch (err) {
      get().notify('error', errorText(err));
      return undefined;
    } finally {
      const { [key]: _done, ...rest } = get().busy;
      set({ busy: rest });
    }
  }

  const afterAction = async (store: Store, message: string, taskId?: string) => {
    store.notify('success', message, taskId);
    await Promise.all([store.loadTasks(), store.refreshSelected()]);
  };

  return {
    busy: {},
    notices: [],
    activity: {},
    runners: {},

    async resume(taskId) {
      // A new run: a stop asked of the last one is over.
      get().forgetStop(taskId);
      const result = await track(`resume:${taskId}`, 'Resuming…', () => get().api.resumeTask({ taskId }));
      if (result) await afterAction(get(), result.message || `Resumed ${taskId}`, taskId);
      return result !== undefined;
    },

    async approve(taskId) {
      const result = await track(`approve:${taskId}`, 'Approving…', () => get().api.approveResume({ taskId }));
      if (result) await afterAction(get(), result.message || `Approved the resume of ${taskId}`, taskId);
      return result !== undefined;
    },

    async reject(taskId, reason) {
      if (!reason.trim()) {
        get().notify('error', 'A reason is required to reject a resume; nothing was changed.');
        return false;
      }
      const result = await track(`reject:${taskId}`, 'Rejecting…', () => get().api.rejectResume({ taskId, reason }));
      if (result) await afterAction(get(), result.message || `Rejected the resume of ${taskId}`);
      return result !== undefined;
    },

    async editStep(taskId, stepId, value, expectedVersion, later) {
      // Validate here as well as in the editor: nothing is sent, let alone written, for an invalid value.
      const step = get().detail?.checkpoint?.plan.find((s) => s.id === stepId);
      const errors = validateAgainstSchema(step?.output_schema ?? null, value);
      if (errors.length > 0) return { ok: false, errors };
      const key = `edit:${taskId}`;
      set({ busy: { ...get().busy, [key]: 'Saving…' } });
      try {
        const result = await get().api.editStepResult({
          taskId,
          stepId,
          value,
          ...(expectedVersion !== undefined ? { expectedVersion } : {}),
          ...(later ? { later } : {}),
        });
        await afterAction(get(), result.message || `Saved version ${result.version}`);
        return { ok: true, errors: [], version: result.version };
      } catch (err) {
        return { ok: false, errors: errorIssues(err) };
      } finally {
        const { [key]: _done, ...rest } = get().busy;
        set({ busy: rest });
      }
    },

    async startTask(input) {
      set({ busy: { ...get().busy, start: 'Starting task…' } });
      let result;
      try {
        result = await get().api.startTask(input);
      } catch (err) {
        return { error: errorText(err) };
      } finally {
        const { start: _done, ...rest } = get().busy;
        set({ busy: rest });
      }
      get().notify('success', result.message || `Started ${result.taskId}`, result.taskId);
      await get().loadTasks();
      get().selectTask(result.taskId, { expectNew: true });
      return { taskId: result.taskId };
    },

    notify(kind, text, taskId) {
      const id = ++noticeId;
      // The host's hints name the directory as <DIR>; the page knows which one it is.
      const filled = fillDirectory(text, get().directory?.root ?? null);
      set({ notices: [...get().notices, { id, kind, text: filled, ...(taskId ? { taskId } : {}) }].slice(-5) });
    },

    dismissNotice(id) {
      set({ notices: get().notices.filter((n) => n.id !== id) });
    },
  };
};

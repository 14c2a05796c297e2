/**
 * Going back in a task's history from the inspector: stop a running task,
 * fork a version into a new task, rerun from a step after looking at what the
 * rerun would do. Nothing is written until the person confirms; the host
 * checks everything again and refuses, with a sentence, what it cannot do.
 */
import { toApiError } from '../../../shared/api/api-error.js';
import type { RewindDraft, Slice, TimeTravelSlice } from './store-types.js';
import { errorText } from './error-text.js';

/** Stop, fork and rerun-from-a-step, with their busy marks and notices. */
export const createTimeTravelSlice: Slice<TimeTravelSlice> = (set, get) => {
  const busy = (key: string, label: string) => {
    set({ busy: { ...get().busy, [key]: label } });
    return () => {
      const { [key]: _done, ...rest } = get().busy;
      set({ busy: rest });
    };
  };
  // A preview answered after the person closed it, or opened another, is dropped.
  let previewSeq = 0;
  const draftIs = (d: RewindDraft) => get().rewind?.taskId === d.taskId && get().rewind?.stepId === d.stepId;

  return {
    stopRequests: {},
    rewind: null,

    async stopTask(taskId, opts = {}) {
      const force = opts.force ?? false;
      const done = busy(`stop:${taskId}`, force ? 'Ending the run…' : 'Stopping…');
      try {
        const result = await get().api.stopTask({ taskId, ...(force ? { force } : {}) });
        // The run may have stopped before the answer came (its exit already heard): then there is nothing left to force.
        const open = get().detail?.summary.task_id === taskId ? get().detail : null;
        if (get().runners[taskId] || open?.lease.held) {
          set({ stopRequests: { ...get().stopRequests, [taskId]: { at: new Date().toISOString(), forced: force } } });
          get().notify('info', result.message || `Asked ${taskId} to stop`, taskId);
        }
        await Promise.all([get().loadTasks(), get().selectedTaskId === taskId ? get().refreshSelected() : undefined]);
        return true;
      } catch (err) {
        get().notify('error', errorText(err));
        return false;
      } finally {
        done();
      }
    },

    forgetStop(taskId) {
      if (!get().stopRequests[taskId]) return;
      const { [taskId]: _over, ...rest } = get().stopRequests;
      set({ stopRequests: rest });
    },

    async forkTask({ taskId, version, newTaskId, reason }) {
      const done = busy(`fork:${taskId}`, 'Forking…');
      let result;
      try {
        result = await get().api.forkTask({
          taskId,
          version,
          ...(newTaskId ? { newTaskId } : {}),
          ...(reason?.trim() ? { reason: reason.trim() } : {}),
        });
      } catch (err) {
        return { error: errorText(err) };
      } finally {
        done();
      }
      get().notify('success', result.message || `Forked ${taskId} v${version} into ${result.taskId}`);
      await get().loadTasks();
      get().selectTask(result.taskId, { expectNew: true });
      return { taskId: result.taskId };
    },

    async previewRewind(taskId, stepId) {
      const mine = ++previewSeq;
      const draft: RewindDraft = { taskId, stepId, state: 'loading', plan: null, redo: [], error: null };
      set({ rewind: draft });
      try {
        const plan = await get().api.previewRewind({ taskId, stepId });
        if (mine === previewSeq && draftIs(draft)) set({ rewind: { ...draft, state: 'ready', plan } });
      } catch (err) {
        if (mine === previewSeq && draftIs(draft)) set({ rewind: { ...draft, state: 'error', error: errorText(err) } });
      }
    },

    chooseRedo(effectId, redo) {
      const draft = get().rewind;
      const effect = draft?.plan?.effects.find((e) => e.id === effectId);
      // Only a done effect can be performed again; an uncertain one is probed on resume whatever is chosen.
      if (!draft || !effect || (redo && effect.status !== 'done')) return;
      const others = draft.redo.filter((id) => id !== effectId);
      set({ rewind: { ...draft, redo: redo ? [...others, effectId] : others, error: null } });
    },

    cancelRewind() {
      previewSeq++;
      set({ rewind: null });
    },

    async confirmRewind(opts = {}) {
      const draft = get().rewind;
      if (!draft?.plan || draft.state !== 'ready') return false;
      const { taskId, stepId, plan, redo } = draft;
      const done = busy(`rewind:${taskId}`, 'Setting the steps back…');
      let result;
      try {
        result = await get().api.rewindTask({
          taskId,
          stepId,
          redo,
          expectedVersion: plan.version,
          ...(opts.reason?.trim() ? { reason: opts.reason.trim() } : {}),
        });
      } catch (err) {
        const moved = toApiError(err).code === 'conflict';
        if (draftIs(draft)) set({ rewind: { ...get().rewind!, error: errorText(err) } });
        // The task moved on since the plan was shown: show the plan as it stands now, the person's choices kept where they still apply.
        if (moved && draftIs(draft)) {
          const mine = ++previewSeq;
          try {
            const fresh = await get().api.previewRewind({ taskId, stepId });
            const still = redo.filter((id) => fresh.effects.some((e) => e.id === id && e.status === 'done'));
            if (mine === previewSeq && draftIs(draft)) set({ rewind: { ...get().rewind!, plan: fresh, redo: still } });
          } catch {
            // The refusal already shown says what to do.
          }
        }
        return false;
      } finally {
        done();
      }
      previewSeq++;
      set({ rewind: null });
      get().notify('success', result.message.split('\n')[0] || `Rerun from ${stepId} prepared`, taskId);
      if (opts.resume) await get().resume(taskId);
      else await Promise.all([get().loadTasks(), get().refreshSelected()]);
      return true;
    },
  };
};

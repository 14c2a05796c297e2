"""The phases the runtime itself sets, as electron/runtime/task-phase.ts does.

`start` when a task is created, `done` when it finishes, and the phase of a task whose steps are set back to pending
to run again (an edit that reruns the steps after it, a resume that reruns the steps of drifted artifacts, a rewind the
TypeScript runtime writes); the agent names the others (`t.phase`). Set back, a finished task is no longer `done`: it
stands where the first of the rerun steps ran, so it takes the phase of the version that recorded that step done (a
step's result is saved with its end, before the agent names the next phase). The version is found by what it holds,
not by its time: a step, its save and the next phase's save can share a millisecond. An agent that never names a phase
is in `start` until it is done, and so is a task whose history does not reach back to that run of the step (a fork's
steps ran in its parent).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from .errors import TaskReadError
from .store import Store

#: The phase a task is created in, before its agent names one.
START_PHASE = "start"
#: The phase a task is in once every step is done or skipped.
DONE_PHASE = "done"


def _instant(text: Any) -> Optional[float]:
    """A checkpoint timestamp as seconds, or None when it is not one (3.10's fromisoformat does not take a Z)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text).timestamp()
    except ValueError:
        return None


def rerun_phase(store: Store, cp: dict[str, Any], from_index: int) -> str:
    """The phase task `cp` stands in once its steps from `from_index` on are set back to pending.

    A few versions read, however long the history (halving it); a version that cannot be read is not a reason to
    refuse the operation, and leaves `start`.
    """
    # The first of the rerun steps to have started: the rerun takes the task back to where it ran.
    started = [(t, i) for i in range(from_index, len(cp["plan"])) if (t := _instant(cp["plan"][i].get("started_at"))) is not None]
    if not started:
        return START_PHASE
    first = min(started)[1]
    step = cp["plan"][first]
    # Not done (failed, or cut off while running): the task is still in the phase that step stopped in.
    if step["status"] != "done":
        return _as_rerun(cp["phase"])

    def holds_it_done(v: dict[str, Any]) -> bool:
        # This run of the step, done: from the version that recorded it on, every version holds it so.
        s = v["plan"][first] if first < len(v["plan"]) else {}
        return s.get("status") == "done" and s.get("started_at") == step["started_at"]

    try:
        low, high, found = 1, cp["version"], cp
        while low < high:
            mid = (low + high) // 2
            v = store.load(cp["task_id"], mid)
            if holds_it_done(v):
                high, found = mid, v
            else:
                low = mid + 1
        # The task's first version holding it done: the step ran before this task began (a fork's, in its parent).
        if low == 1:
            return START_PHASE
        return _as_rerun(found["phase"] if found["version"] == low else store.load(cp["task_id"], low)["phase"])
    except TaskReadError:
        return START_PHASE


def _as_rerun(phase: str) -> str:
    """A step rerun after the task was done (by a build that left the phase at done) ran in no phase of its agent's."""
    return START_PHASE if phase == DONE_PHASE else phase

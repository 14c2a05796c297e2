"""The phases the runtime itself sets, as electron/runtime/task-phase.ts does.

`start` when a task is created, `done` when it finishes, and the phase of a task whose steps are set back to pending
to run again (an edit that reruns the steps after it, a resume that reruns the steps of drifted artifacts, a rewind the
TypeScript runtime writes); the agent names the others (`t.phase`). Set back, a finished task is no longer `done`: it
stands where the first of the rerun steps started, so it takes the phase it was in then, which its history holds (that
of the newest version saved no later than that start). An agent that never names a phase is in `start` until it is
done, and so is a task whose history does not reach back that far (a fork's steps ran in its parent).
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

    A version that cannot be read is not a reason to refuse the operation, and leaves `start`.
    """
    starts = [t for t in (_instant(s.get("started_at")) for s in cp["plan"][from_index:]) if t is not None]
    if not starts:
        return START_PHASE
    # The first of them to start: the rerun takes the task back to before it.
    started_at = min(starts)
    try:
        # Versions are saved in time order: the newest saved no later than that start is found by halving, a few
        # versions read however long the task (reading back one at a time read them all for an early step).
        low, high, found = 1, cp["version"], None
        while low <= high:
            v = (low + high) // 2
            version = cp if v == cp["version"] else store.load(cp["task_id"], v)
            saved = _instant(version["run"].get("updated_at"))
            if saved is not None and saved <= started_at:
                found, low = version, v + 1
            else:
                high = v - 1
    except TaskReadError:
        return START_PHASE
    if found is None:
        return START_PHASE
    # A step rerun after the task was done (by a build that left the phase at done) ran in no phase of its agent's.
    return START_PHASE if found["phase"] == DONE_PHASE else found["phase"]

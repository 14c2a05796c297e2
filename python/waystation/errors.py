"""The library's exceptions: each says what went wrong and what was left untouched."""

from __future__ import annotations

from typing import Any, Optional


class WaystationError(Exception):
    """The base of every error this library raises on purpose."""


class TaskReadError(WaystationError):
    """A task, a version or a blob could not be read; nothing was written."""


class TaskNotFoundError(TaskReadError):
    """There is no task with this id in the directory."""


class SchemaError(WaystationError):
    """A checkpoint does not fit docs/checkpoint.schema.json; it never reached the disk."""

    def __init__(self, message: str, problems: Optional[list[str]] = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class ConflictError(WaystationError):
    """Another writer saved this version first; nothing of this save remains."""

    def __init__(self, task_id: str, version: int) -> None:
        super().__init__(
            f"task {task_id}: version {version} was written by another writer first; "
            "nothing of this save was written. Load the task again and retry."
        )
        self.task_id = task_id
        self.version = version


class StoreWriteError(WaystationError):
    """The disk refused a save; the message says what was and was not written."""


class WriteLimitError(StoreWriteError):
    """A save refused before anything was written, because a reader would refuse what it writes.

    `limit` says which: `"file-size"` (a version file, or checkpoint.json, over the readers' limit for one
    file) or `"depth"` (a value nested deeper than readers accept). The rule of electron/store/write-limits.ts.
    """

    def __init__(self, message: str, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


class ReadOnlyTaskError(WaystationError):
    """The task must not be written (a newer schema, an article format)."""


class LeaseHeldError(WaystationError):
    """Another live runner drives the task; nothing was written."""

    def __init__(self, task_id: str, holder: dict[str, Any]) -> None:
        super().__init__(
            f"task {task_id} is being driven by another runner (pid {holder.get('pid')} on "
            f"{holder.get('hostname')}, last heartbeat {holder.get('heartbeat_at')}); nothing was written. "
            "Wait for it to finish, or stop it first."
        )
        self.task_id = task_id
        self.holder = holder


class LeaseLostError(WaystationError):
    """The lease was taken over while held: this runner must stop writing."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"the lease on task {task_id} was taken over by another runner; this runner stopped writing")
        self.task_id = task_id


class LeaseReleasedError(LeaseLostError):
    """The lease was let go by its own holder: nothing more may be written under it."""

    def __init__(self, task_id: str) -> None:
        super().__init__(task_id)
        self.args = (f"the lease on task {task_id} was let go by this runner; nothing more is written under it",)


class TaskFolderGoneError(LeaseLostError):
    """The task folder was deleted, or renamed or replaced, during the run: the runner stopped writing, into either folder."""

    def __init__(self, task_id: str, task_dir: str, how: str) -> None:
        super().__init__(task_id)
        self.task_dir = task_dir
        self.args = (
            f"the folder of task {task_id} ({task_dir}) was deleted during the run; the runner stopped and wrote nothing more"
            if how == "deleted"
            else f"the folder of task {task_id} ({task_dir}) was renamed or replaced during the run (it is no longer the folder the run started in); the runner stopped and wrote nothing more, into either folder",
        )


class OperationError(WaystationError):
    """A refused operation (bad input, wrong agent, halted task, ...): nothing was written. `code` says which."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ArgumentError(OperationError, TypeError, ValueError):
    """An argument of the wrong type or form, named in the message; nothing was run or written for the call.

    An OperationError (code `invalid`), and a TypeError and a ValueError too, so code that catches
    Python's own errors for a bad argument catches it.
    """

    def __init__(self, message: str) -> None:
        super().__init__("invalid", message)


class TaskClosedError(WaystationError):
    """A call on a task whose `with` block (or run) has ended: the lease is let go, so nothing is written."""

    def __init__(self, task_id: str, call: str) -> None:
        super().__init__(
            f"task {task_id} is closed: the `with waystation.task(...)` block (or the run) that opened it has ended and "
            f"let its lease go, so {call} was refused and nothing was written. Open the task again to continue it"
        )
        self.task_id = task_id
        self.call = call


class EffectOutcomeNotStored(WaystationError):
    """A side effect happened, but what `perform` returned cannot be stored (not JSON, too deep or too large).

    The ledger records the effect as done, without its outcome, so it is never performed again and no
    resume asks a human whether it happened.
    """

    def __init__(self, effect_type: str, key: str, reason: str) -> None:
        super().__init__(
            f"side effect {effect_type} (key {key}) happened, but its outcome could not be stored: {reason}. "
            "The ledger records it as done without its outcome, so it is not performed again and a resume does not ask "
            "about it (t.effect returns None for it from now on); return plain JSON data from perform"
        )
        self.effect_type = effect_type
        self.key = key
        self.reason = reason


class StepFailed(WaystationError):
    """A step raised; its failure is already saved in the checkpoint."""

    def __init__(self, step_id: str, message: str) -> None:
        super().__init__(f"step {step_id} failed: {message}")
        self.step_id = step_id
        self.cause_message = message


class WaitingForHuman(WaystationError):
    """Raised by `wait_for_human` to unwind the agent once the wait is saved."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"waiting for a human: {reason}")
        self.reason = reason


class StopRequested(WaystationError):
    """A person asked this run to stop (`waystation stop`, the app's Stop): raised at a safe boundary to unwind the agent.

    Raised before a step starts and before an effect's intent is recorded, so nothing of either has
    happened yet; the runtime then saves the stop (`recovery.stopped`) and lets the lease go.
    `request` is the stop request as read: ``{"by", "at", "reason"?, "count"}``.
    """

    def __init__(self, request: dict[str, Any]) -> None:
        super().__init__(f"stopped by {request.get('by', 'someone')}")
        self.request = request


class LlmCallError(WaystationError):
    """A model call failed for good, after its retries (which are still recorded)."""

    def __init__(self, message: str, model: str, retries: int = 0, retry_reasons: Optional[list[str]] = None, latency_ms: float = 0) -> None:
        super().__init__(message)
        self.model = model
        self.retries = retries
        self.retry_reasons = retry_reasons or []
        self.latency_ms = latency_ms

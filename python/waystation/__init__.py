"""Waystation for Python: durable, resumable agent tasks in the Waystation checkpoint format.

    import waystation

    with waystation.task("checkpoints", "my-task", agent="my-agent", plan=["fetch", "summarise"]) as t:
        page = t.step("fetch", lambda: download())
        summary = t.step("summarise", lambda: t.complete([{"role": "user", "content": page}]).text)

Tasks written here are listed, shown, diffed, verified and resumed by the
Waystation app and CLI, and tasks they wrote are continued here.
"""

from .cli import main
from .confinement import PathOutsideRoot, resolve_inside_root
from .errors import (
    ArgumentError,
    ConflictError,
    EffectOutcomeNotStored,
    LeaseHeldError,
    LeaseLostError,
    LlmCallError,
    OperationError,
    ReadOnlyTaskError,
    SchemaError,
    StepFailed,
    StopRequested,
    StoreWriteError,
    TaskClosedError,
    TaskFolderGoneError,
    TaskNotFoundError,
    TaskReadError,
    WaitingForHuman,
    WaystationError,
    WriteLimitError,
)
from .lease import Lease, acquire_lease, read_lease, read_stop_request, write_stop_request
from .llm import Completion, OfflineModel, OpenAIModel, document_block, estimate_cost_usd, model_from_env
from .resume import ResumeContext, check_artifacts
from .runtime import (
    Agent,
    Outcome,
    PlannedStep,
    Run,
    TaskContext,
    TaskNotRunnable,
    edit_step_result,
    generate_task_id,
    reject_task,
    request_stop,
    run_agent,
    task,
)
from .schema import checkpoint_schema, invariant_problems, validate
from .store import Store

__version__ = "0.1.0"

__all__ = [
    "Agent", "ArgumentError", "Completion", "ConflictError", "EffectOutcomeNotStored", "LeaseHeldError",
    "LeaseLostError", "LlmCallError", "Lease", "OfflineModel", "OpenAIModel", "OperationError", "Outcome",
    "PathOutsideRoot", "PlannedStep", "ReadOnlyTaskError", "ResumeContext", "Run", "SchemaError", "StepFailed",
    "StopRequested", "Store", "StoreWriteError", "TaskClosedError", "TaskContext", "TaskFolderGoneError",
    "TaskNotFoundError", "TaskNotRunnable", "TaskReadError", "WaitingForHuman", "WaystationError", "WriteLimitError",
    "acquire_lease", "check_artifacts", "checkpoint_schema", "document_block", "edit_step_result", "estimate_cost_usd",
    "generate_task_id", "invariant_problems", "main", "model_from_env", "read_lease", "read_stop_request",
    "reject_task", "request_stop", "resolve_inside_root", "run_agent", "task", "validate", "write_stop_request",
]

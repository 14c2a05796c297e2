"""The runtime: drives one task under its lease and saves at the five boundaries.

A step (or phase) completes; before and after each side effect; after each
model call and each `remember` action; before waiting for a human; after
recovering from an error. Every save follows the last saved version, so a
crash at any instant leaves the newest complete version as the truth, and a
resume (six steps, see `Run.open`) continues from it. This follows
electron/runtime/task-engine.ts and task-operations.ts rule for rule, so a
task either language started can be continued by the other.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, TypeVar, Union

from . import files
from .arguments import require_callable, require_content, require_messages, require_path, require_str
from .continuation import PROGRAM, caller_program, fill_directory, hint, next_step, run_hint, script_program, settle_words
from .errors import (
    ArgumentError,
    EffectOutcomeNotStored,
    LeaseHeldError,
    LeaseLostError,
    LlmCallError,
    OperationError,
    ReadOnlyTaskError,
    SchemaError,
    StepFailed,
    StopRequested,
    TaskClosedError,
    TaskFolderGoneError,
    TaskNotFoundError,
    TaskReadError,
    WaitingForHuman,
    WriteLimitError,
)
from .jsonutil import canonical_json, copy_json, to_plain
from .lease import Lease, acquire_lease, highest_entry, lease_is_live, write_stop_request
from .llm import Completion, Model, estimate_cost_usd, model_from_env
from .confinement import CONFINED_ENV
from .options import reserved_option_message, unknown_options_message
from .phase import DONE_PHASE, START_PHASE, rerun_phase
from .plan import PlannedStep, planned_steps
from .records import version_file_name
from .resume import ResumeContext, artifact_base_dir, build_resume_context, check_artifacts, decide_resume, describe_plan, same_plan
from .schema import CURRENT_SCHEMA_VERSION, check_checkpoint, expected_current_step, validate
from .store import Store, is_task_id, now_iso
from .write_limits import MAX_VALUE_DEPTH, depth_refusal, nests_within

T = TypeVar("T")
MODES = ("manual", "auto", "confirm")
DEFAULT_MAX_AUTO_ATTEMPTS = 3
#: The exit code of a run a person stopped (electron/runtime/worker-protocol.ts, RunExit.stopped).
EXIT_STOPPED = 8


def redact(text: str, env: Optional[dict[str, str]] = None) -> str:
    """Scrub the API key and bearer tokens from text bound for a checkpoint, an event or a log."""
    env = os.environ if env is None else env
    secret = (env.get("OPENAI_API_KEY") or "").strip()
    if len(secret) >= 6:
        text = text.replace(secret, "[redacted]")
    return re.sub(r"\bBearer\s+[A-Za-z0-9._-]{8,}", "Bearer [redacted]", text)


def _redact_in(value: Any, env: Optional[dict[str, str]] = None) -> Any:
    # Loops, not comprehensions: one frame a level, so any value that nests within the readers' limit is walked.
    if isinstance(value, str):
        return redact(value, env)
    if isinstance(value, list):
        out = []
        for v in value:
            out.append(_redact_in(v, env))
        return out
    if isinstance(value, dict):
        clean = {}
        for k, v in value.items():
            clean[redact(k, env)] = _redact_in(v, env)
        return clean
    return value


@dataclass
class Outcome:
    """How a drive of a task ended: its status and version, what happened, and what a human can do next."""

    task_id: str
    status: str
    version: int
    message: str
    next: Optional[str] = None
    #: The run ended because a person stopped it: the task is left interrupted (status running, no holder) and is not retried automatically.
    stopped: bool = False

    @property
    def exit_code(self) -> int:
        """The exit code of the runtime's convention: 0 done, 1 failed, 3 waiting for a human, 4 waiting for approval, 5 halted, 8 stopped."""
        if self.stopped:
            return EXIT_STOPPED
        return {"done": 0, "failed": 1, "waiting_human": 3, "waiting_approval": 4, "halted": 5}.get(self.status, 7)


ProbeResult = dict[str, Any]  # {"happened": bool, "outcome": ...}


PlanItem = Union[PlannedStep, str, tuple[str, str]]


@dataclass
class Agent:
    """An agent: a name, its options, a plan of named steps, a goal, probes by effect type, and `run(ctx)`.

    `options` is a JSON Schema object (`{"type": "object", "properties": {...}, "required": [...]}`);
    defaults given there are filled in. Its property names must not be those of the built-in flags of
    `waystation.main` (options.RESERVED_OPTION_NAMES), since each option is also a `--name` flag.
    `plan` is a list of steps, each a PlannedStep, a step id or an `(id, name)` pair (as `waystation.task`
    takes them), or a callable `plan(options, env)` that returns one, `env` holding `task_id`, `root` and
    `confined` (see `resolve_options`). `goal` is a string or a callable `goal(options)`.
    """

    name: str
    run: Callable[["TaskContext"], Any]
    plan: Union[list[PlanItem], Callable[[dict[str, Any], dict[str, Any]], list[PlanItem]]] = field(default_factory=list)
    goal: Union[str, Callable[[dict[str, Any]], str]] = ""
    description: str = ""
    options: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    probes: dict[str, Callable[[dict[str, Any], dict[str, Any]], ProbeResult]] = field(default_factory=dict)
    # Called with the options and {"task_id", "root", "confined"}: `confined` is True when the options came from the
    # inspector, and the folders they name must then stay inside the root (confinement.py, resolve_inside_root).
    resolve_options: Optional[Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = None

    def __post_init__(self) -> None:
        require_str(self.name, "Agent(name=...)", "name", empty=False)
        require_callable(self.run, "Agent(run=...)", "run")
        if not callable(self.plan):
            self.plan = planned_steps(self.plan, f"Agent(plan=...) of agent {self.name}")  # type: ignore[assignment]
        if not isinstance(self.options, dict):
            raise ArgumentError(f"Agent(options=...) of agent {self.name}: options must be a JSON Schema (a dict), got {type(self.options).__name__}")
        self._check_option_names()

    def _check_option_names(self) -> None:
        # An option is a `--name` flag of waystation.main as well: one named like a built-in flag cannot be told apart.
        reserved = reserved_option_message(self.name, self.options)
        if reserved:
            raise ArgumentError(reserved)

    def steps(self, opts: dict[str, Any], env: dict[str, Any]) -> list[PlannedStep]:
        """The plan of a task started with `opts`, as PlannedSteps."""
        if callable(self.plan):
            return planned_steps(self.plan(opts, env), f"the plan of agent {self.name}")
        return list(self.plan)  # type: ignore[arg-type]

    def describe(self) -> dict[str, Any]:
        """Name, description and options schema, as the app shows them."""
        return {"name": self.name, "description": self.description, "options": self.options}

    def parse_options(self, raw: Optional[dict[str, Any]]) -> dict[str, Any]:
        """Options with defaults filled, checked against the schema; OperationError('invalid') when they do not fit."""
        opts = dict(raw or {})
        unknown = unknown_options_message(self.name, self.options, opts)
        if unknown:
            raise OperationError("invalid", unknown)
        for key, sub in (self.options.get("properties") or {}).items():
            if key not in opts and isinstance(sub, dict) and "default" in sub:
                opts[key] = copy.deepcopy(sub["default"])
        problems = validate(opts, self.options, "options")
        if problems:
            raise OperationError("invalid", f"invalid options for agent {self.name}: {'; '.join(problems)}. Nothing was written.")
        return opts


# ---- the engine -------------------------------------------------------------------------------


class _Engine:
    """Drives one task under its lease. One per drive; not reusable across processes."""

    def __init__(self, store: Store, root: str, checkpoint: dict[str, Any], lease: Optional[Lease], model: Model, probes: dict[str, Callable[..., ProbeResult]], report: Optional[Callable[[str], None]], env: Optional[dict[str, str]] = None) -> None:
        self.store = store
        self.root = root
        self.working = copy_json(checkpoint)
        self.lease = lease
        self.model = model
        self.probes = probes
        self.env = os.environ if env is None else env
        self._report = report
        self.current_step: Optional[str] = None
        self.call_index = 0
        self.wait_index = 0
        self.pending_artifacts: dict[str, dict[str, Any]] = {}
        self.step_recovery: Optional[dict[str, str]] = None
        self.llm_cache: dict[str, Completion] = {}
        self.remembered: dict[str, str] = {}
        self.remember_keys: set[str] = set()
        self.started = time.monotonic()
        self.elapsed_before = float(checkpoint.get("run", {}).get("elapsed_ms", 0) or 0)
        self.resumed: Optional[ResumeContext] = None
        #: Set when the run lets the lease go: from then on every call of the agent's TaskContext is refused.
        self.closed = False
        #: A step asked for without a function (`t.step("a")`), whose decorator has not been applied yet.
        self.undecorated: Optional[str] = None

    def guard(self, call: str) -> None:
        """Refuse a call of the agent's TaskContext on a closed task, or after a `t.step(id)` that was given no function."""
        if self.closed:
            raise TaskClosedError(self.task_id, call)
        self.refuse_undecorated()

    def refuse_undecorated(self) -> None:
        """Refuse to go on past `t.step(id)` called without a function and never used as a decorator: the step would never run."""
        refusal = self.undecorated_refusal()
        if refusal is not None:
            raise refusal

    def undecorated_refusal(self) -> Optional[ArgumentError]:
        """The refusal of a `t.step(id)` given no function and never applied (see refuse_undecorated), or None; clears it."""
        if self.undecorated is None:
            return None
        sid, self.undecorated = self.undecorated, None
        return ArgumentError(
            f't.step("{sid}") was given no function, so step {sid} never ran: pass one (t.step("{sid}", fn)) '
            f'or put @t.step("{sid}") over a def'
        )

    @property
    def task_id(self) -> str:
        return self.working["task_id"]

    def check_stop(self) -> None:
        """A safe boundary: unwind the agent when a person asked this run to stop (before a step starts, before an effect)."""
        request = self.lease.stop_request() if self.lease is not None else None
        if request:
            raise StopRequested(request)

    def report(self, line: str) -> None:
        if self._report:
            self._report(redact(line, self.env))

    def event(self, type_: str, step_id: Optional[str] = None, data: Optional[dict[str, Any]] = None) -> None:
        """Append an event; a failed append never fails the task, whose truth is the versions."""
        if self.lease is not None:
            try:
                self.lease.assert_held()
            except LeaseLostError:
                return  # nothing is written where the lease no longer holds: the run stops at its next save, saying why
        try:
            ev: dict[str, Any] = {"type": type_}
            if step_id is not None:
                ev["step_id"] = step_id
            if data is not None:
                ev["data"] = data
            self.store.append_event(self.task_id, ev)
        except OSError as err:
            self.report(f"could not append a {type_} event: {err}")

    def save(self, mutate: Callable[[dict[str, Any]], None], results: Optional[dict[str, Any]] = None, append_history: Optional[list[dict[str, Any]]] = None, source: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        """Save the next version: `mutate` a copy of the working state, derive the counters, write it after the last version."""
        if self.lease is not None:
            self.lease.assert_held()
        d = copy_json(self.working)
        mutate(d)
        d["total_steps"] = len(d["plan"])
        d["current_step"] = expected_current_step(d["plan"])
        d["run"]["updated_at"] = now_iso()
        d["run"]["elapsed_ms"] = round(self.elapsed_before + (time.monotonic() - self.started) * 1000)
        d["source"] = source or {"kind": "runtime"}
        version = d.pop("version")
        saved = self.store.save(self.task_id, version, d, results=results, append_history=append_history, lease=self.lease)
        self.working = saved
        return saved

    def step_index(self, ref: str) -> int:
        plan = self.working["plan"]
        i = next((i for i, s in enumerate(plan) if s["id"] == ref), -1)
        return i if i >= 0 else next((i for i, s in enumerate(plan) if s["name"] == ref), -1)

    def stored_result(self, step: dict[str, Any]) -> Any:
        if step.get("result_ref"):
            return self.store.read_blob(self.task_id, step["result_ref"])
        return step.get("result")

    def next_hint(self) -> str:
        i = expected_current_step(self.working["plan"])
        plan = self.working["plan"]
        return f"continue at {plan[i]['id']} ({plan[i]['name']})" if i < len(plan) else "all steps finished"

    def load_llm_cache(self) -> None:
        """Model replies and remembered results from the history, so a rerun step does not pay twice."""
        if not (self.working.get("history") or {}).get("count"):
            return
        for m in self.store.read_history(self.task_id, self.working):
            if m.get("role") == "tool" and isinstance(m.get("remember_key"), str) and isinstance(m.get("call_key"), str):
                self.remembered[m["call_key"]] = m["content"]
            elif m.get("role") == "assistant" and isinstance(m.get("call_key"), str):
                self.llm_cache[m["call_key"]] = Completion(m["content"], m.get("model") or self.model.model, m.get("tokens_in", 0), m.get("tokens_out", 0), 0)

    # ---- steps -----------------------------------------------------------------------------

    def run_step(self, ref: str, fn: Callable[[], T]) -> Any:
        if not isinstance(ref, str) or not ref:
            raise ArgumentError(f"t.step(step_id, fn): a step needs an id (a non-empty string), got {ref!r}")
        require_callable(fn, f't.step("{ref}", fn)', "fn")
        if self.current_step is not None:
            raise OperationError("invalid", f'step "{ref}" was started inside step "{self.current_step}"; steps do not nest')
        index = self.step_index(ref)
        if index < 0:
            self.working["plan"].append({"id": ref, "name": ref, "status": "pending", "attempts": 0})
            index = len(self.working["plan"]) - 1
        step = self.working["plan"][index]
        if step["status"] in ("done", "skipped"):
            self.report(f"{step['id']} ({step['name']}): already {step['status']}, stored result reused")
            return self.stored_result(step)  # type: ignore[no-any-return]
        self.check_stop()
        sid = step["id"]
        failures_before = int(step.get("failures", 0) or 0)
        previous_error = step.get("error")
        self.current_step = sid
        self.call_index = 0
        self.wait_index = 0
        self.remember_keys = set()
        self.pending_artifacts = {}
        self.step_recovery = None
        started = time.monotonic()
        step.update(status="running", started_at=now_iso(), finished_at=None, attempts=int(step.get("attempts", 0)) + 1)
        self.working["status"] = "running"
        self.report(f"{sid} ({step['name']}): started (attempt {step['attempts']})")
        self.event("step-start", sid, {"name": step["name"], "attempt": step["attempts"]})
        try:
            value = fn()
            # Measured before anything walks it: a value past the readers' depth would be refused by the store anyway,
            # and Python's own recursion gives out on it first.
            if not nests_within(value, MAX_VALUE_DEPTH):
                raise depth_refusal(f'the result of step "{sid}"', f"{self.task_id}/versions/{version_file_name(self.working['version'] + 1)}")
            plain = to_plain(value)
            if step.get("output_schema"):
                problems = validate(plain, step["output_schema"], "result")
                if problems:
                    raise _StepOutputError(f"the result does not match the step's output schema: {'; '.join(problems)}")
        except (WaitingForHuman, LeaseLostError, StopRequested, TaskClosedError, KeyboardInterrupt, SystemExit):
            self.current_step = None
            raise
        except Exception as err:  # noqa: BLE001 - any failure of the agent's step is recorded, then re-raised as StepFailed
            self.current_step = None
            self.undecorated = None  # the step failed of itself: a `t.step(id)` it left without a function goes with it
            if isinstance(err, WriteLimitError):
                self.fail_step(sid, started, failures_before, f"{_UNSAVABLE}{redact(str(err), self.env)}", "invalid-checkpoint")
            kind = "llm" if isinstance(err, LlmCallError) else "output-schema" if isinstance(err, _StepOutputError) else "invalid-checkpoint" if isinstance(err, SchemaError) else type(err).__name__
            self.fail_step(sid, started, failures_before, redact(str(err) or type(err).__name__, self.env), kind)
        refusal = self.undecorated_refusal()
        if refusal is not None:
            # The step's body ended past a `t.step(id)` given no function: that step never ran, so this one must not pass.
            self.current_step = None
            self.fail_step(sid, started, failures_before, str(refusal), type(refusal).__name__)
        result = _redact_in(plain, self.env)
        recovery = self.step_recovery or (
            {"what": previous_error["message"], "fix": f"reran the step on resume (attempt {step['attempts']})", "verification": f"step {sid} completed"} if previous_error else None
        )
        pending = list(self.pending_artifacts.values())

        def done(d: dict[str, Any]) -> None:
            s = next(x for x in d["plan"] if x["id"] == sid)
            s.update(status="done", finished_at=now_iso(), elapsed_ms=round(s.get("elapsed_ms", 0) + (time.monotonic() - started) * 1000), error=None)
            for a in pending:
                _upsert_artifact(d, a)
            if recovery:
                d["errors"].append({"at": now_iso(), "step_id": sid, **recovery})
            d["resume_hint"] = self.next_hint_of(d)

        try:
            self.save(done, results={sid: result}, source=boundary(f"step {sid} done"))
        except (SchemaError, WriteLimitError) as err:
            # The agent handed over something the checkpoint cannot hold: the step fails with the store's reason.
            self.current_step = None
            self.pending_artifacts = {}
            self.fail_step(sid, started, failures_before, f"{_UNSAVABLE}{redact(str(err), self.env)}", "invalid-checkpoint")
        self.pending_artifacts = {}
        self.current_step = None
        self.report(f"{sid}: done")
        self.event("step-finish", sid, {"status": "done", "elapsed_ms": round((time.monotonic() - started) * 1000)})
        # What was stored, not the agent's own object: a resume returns the stored result, so the first run does too
        # (a tuple is a list, 1.0 is 1, a secret is redacted, on both).
        return result

    @staticmethod
    def next_hint_of(d: dict[str, Any]) -> str:
        i = expected_current_step(d["plan"])
        return f"continue at {d['plan'][i]['id']} ({d['plan'][i]['name']})" if i < len(d["plan"]) else "all steps finished"

    def fail_step(self, sid: str, started: float, failures_before: int, message: str, kind: str) -> None:
        def failed(d: dict[str, Any]) -> None:
            s = next(x for x in d["plan"] if x["id"] == sid)
            s.update(
                status="failed",
                finished_at=now_iso(),
                elapsed_ms=round(s.get("elapsed_ms", 0) + (time.monotonic() - started) * 1000),
                error={"message": message, "kind": kind, "at": now_iso()},
                failures=failures_before + 1,
            )
            d["status"] = "failed"
            d["resume_hint"] = (
                f"{sid} ({s['name']}) failed: {message}. Fix the cause and {run_hint(d, 'resume')}, "
                f"or set its result with {hint(d, 'edit', f' {sid} --value JSON')}"
            )

        self.save(failed, source=boundary(f"step {sid} failed"))
        self.report(f"{sid}: failed: {message}")
        self.event("step-finish", sid, {"status": "failed", "error": message})
        raise StepFailed(sid, message)

    def skip_step(self, ref: str, reason: str) -> None:
        index = self.step_index(ref)
        if index < 0:
            raise OperationError("unknown-step", f'cannot skip step "{ref}": it is not in the plan')
        step = self.working["plan"][index]
        if step["status"] in ("done", "skipped"):
            return

        def skip(d: dict[str, Any]) -> None:
            d["plan"][index].update(status="skipped", finished_at=now_iso(), error=None, skip_reason=redact(reason, self.env))
            d["resume_hint"] = self.next_hint_of(d)

        self.save(skip, source=boundary(f"step {step['id']} skipped"))
        self.event("step-finish", step["id"], {"status": "skipped", "reason": reason})

    # ---- side effects ----------------------------------------------------------------------

    def probe_for(self, type_: str, probe: Optional[Callable[[dict[str, Any]], ProbeResult]]) -> Optional[Callable[[dict[str, Any]], ProbeResult]]:
        if probe:
            return probe
        agent_probe = self.probes.get(type_)
        if agent_probe:
            return lambda e: agent_probe(e, (self.working.get("agent") or {}).get("options", {}))
        return None

    def settle_by_probe(self, effect: dict[str, Any], probe: Callable[[dict[str, Any]], ProbeResult]) -> ProbeResult:
        """Ask the outside world about one uncertain effect and record the answer."""
        result = probe(copy_json(effect))
        if not isinstance(result, dict):
            raise ArgumentError(f'the probe of side effect {effect["type"]} must return {{"happened": bool, "outcome": ...}}, got {type(result).__name__}')
        happened = bool(result.get("happened"))
        outcome = to_plain(result.get("outcome")) if happened else None

        def settle(d: dict[str, Any]) -> None:
            e = next(x for x in d["side_effects"] if x["id"] == effect["id"])
            if happened:
                e.update(status="done", outcome=outcome, reconciliation="probed-done", updated_at=now_iso())
            else:
                e.update(status="not_started", reconciliation="probed-absent-retried", updated_at=now_iso())

        self.save(settle, source=effect_boundary(effect["type"], effect["idempotency_key"], "probed, it happened" if happened else "probed, it did not happen"))
        rec = "probed-done" if happened else "probed-absent-retried"
        self.event("effect", effect.get("step_id"), {"effect": effect["id"], "status": "done" if happened else "not_started", "reconciliation": rec})
        self.report(
            f"effect {effect['type']} (key {effect['idempotency_key']}): probed, "
            + ("it happened; marked done" if happened else "it did not happen; will retry with the same key")
        )
        return {**result, "outcome": copy_json(outcome)}

    def effect_for(self, key: str) -> Optional[dict[str, Any]]:
        """The ledger entry that answers for the key an agent asks with: the entry with that key, or the one
        that records it as its `asked_key` (a repeat a person chose when rewinding, an effect carried into a
        fork); a superseded entry never."""
        return next((e for e in self.working["side_effects"] if not e.get("superseded_by") and (e.get("asked_key") or e["idempotency_key"]) == key), None)

    def run_effect(self, type_: str, key: str, perform: Callable[[str], T], request: Any = None, probe: Optional[Callable[[dict[str, Any]], ProbeResult]] = None) -> T:
        call = f"t.effect({type_!r:.40}, key={key!r:.60})"
        require_str(type_, call, "type", empty=False)
        require_str(key, call, "key", empty=False)
        require_callable(perform, call, "perform")
        if probe is not None:
            require_callable(probe, call, "probe")
        # The request is recorded with the intent: one that is not JSON is refused before anything is performed.
        try:
            plain_request = None if request is None else to_plain(request)
        except (TypeError, ValueError) as err:
            raise ArgumentError(f"{call}: request cannot be stored as JSON ({err}); nothing was performed") from None
        step_id = self.current_step
        the_probe = self.probe_for(type_, probe)
        existing = self.effect_for(key)
        if existing is not None:
            held = existing["idempotency_key"]
            if existing["status"] == "done":
                self.report(f"effect {existing['type']} (key {held}): already done, not performed again")
                return copy_json(existing.get("outcome"))  # type: ignore[no-any-return]
            if existing["status"] in ("intent", "uncertain"):
                if the_probe is None:
                    self.wait_for_human(f"side effect {existing['type']} (key {held}) may or may not have happened and has no probe; {settle_words(held)}")
                else:
                    settled = self.settle_by_probe(existing, the_probe)
                    if settled.get("happened"):
                        return settled.get("outcome")  # type: ignore[no-any-return]
        self.check_stop()
        existing = self.effect_for(key)
        if existing is None:
            entry: dict[str, Any] = {"id": f"effect-{len(self.working['side_effects']) + 1}", "type": type_, "status": "not_started", "idempotency_key": key, "attempts": 0}
            if step_id is not None:
                entry["step_id"] = step_id
            self.working["side_effects"].append(entry)
            existing = entry
        effect_id = existing["id"]
        # A repeat a person chose runs under its own, new key.
        key = existing["idempotency_key"]

        def by_id(d: dict[str, Any]) -> dict[str, Any]:
            return next(e for e in d["side_effects"] if e["id"] == effect_id)

        def intent(d: dict[str, Any]) -> None:
            e = by_id(d)
            e.update(status="intent", attempts=int(e.get("attempts", 0)) + 1, has_probe=the_probe is not None, updated_at=now_iso())
            if plain_request is not None:
                e["request"] = plain_request
            if "step_id" not in e and step_id is not None:
                e["step_id"] = step_id

        # Before: the intent, with the key, is durable before anything leaves the process.
        self.save(intent, source=effect_boundary(type_, key, "intent"))
        self.event("effect", step_id, {"effect": effect_id, "type": type_, "key": key, "status": "intent"})
        try:
            outcome = perform(key)
        except Exception as err:
            message = redact(str(err) or type(err).__name__, self.env)

            def uncertain(d: dict[str, Any]) -> None:
                by_id(d).update(status="uncertain", error=message, reconciliation=None, updated_at=now_iso())

            # A failed call may still have reached the service (a reply lost on the way back): only a probe can tell.
            self.save(uncertain, source=effect_boundary(type_, key, "uncertain"))
            self.event("effect", step_id, {"effect": effect_id, "status": "uncertain", "error": message})
            raise

        # After: the outcome, as stored. One that cannot be stored does not make the effect uncertain: it happened.
        unstored: Optional[str] = None
        try:
            if not nests_within(outcome, MAX_VALUE_DEPTH):
                raise ValueError(f"it is nested more than {MAX_VALUE_DEPTH} levels deep, the most a checkpoint value may nest")
            stored = to_plain(outcome)
        except (TypeError, ValueError) as err:
            stored, unstored = None, str(err)

        def done(d: dict[str, Any]) -> None:
            e = by_id(d)
            e.update(status="done", outcome=stored, updated_at=now_iso())
            if unstored is None:
                e.pop("error", None)
            else:
                e["error"] = f"performed, but its outcome could not be stored: {unstored}"

        if unstored is None:
            try:
                self.save(done, source=effect_boundary(type_, key, "done"))
            except (SchemaError, WriteLimitError) as err:
                stored, unstored = None, redact(str(err), self.env)
        if unstored is not None:
            self.save(done, source=effect_boundary(type_, key, "done"))
            self.event("effect", step_id, {"effect": effect_id, "status": "done", "error": "outcome not stored"})
            raise EffectOutcomeNotStored(type_, key, unstored)
        self.event("effect", step_id, {"effect": effect_id, "status": "done"})
        self.report(f"effect {type_} (key {key}): done")
        # What was stored, as a resume returns it.
        return copy_json(stored)  # type: ignore[no-any-return]

    # ---- artifacts -------------------------------------------------------------------------

    def resolve(self, p: str) -> str:
        return os.path.abspath(os.path.join(artifact_base_dir(self.root, self.working), p))

    def record_artifact(self, p: str, type_: str) -> dict[str, Any]:
        abs_path = self.resolve(p)
        with open(abs_path, "rb") as f:
            data = f.read()
        base = artifact_base_dir(self.root, self.working)
        rel = os.path.relpath(abs_path, base)
        recorded = rel.replace(os.sep, "/") if rel and not rel.startswith("..") and not os.path.isabs(rel) else abs_path
        artifact: dict[str, Any] = {"type": type_, "path": recorded, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "status": "written"}
        if self.current_step:
            artifact["step_id"] = self.current_step
            self.pending_artifacts[recorded] = artifact
        else:
            self.save(lambda d: _upsert_artifact(d, artifact), source=boundary(f"artifact {recorded}"))
        return artifact

    # ---- the model -------------------------------------------------------------------------

    def complete(self, messages: list[dict[str, str]], **opts: Any) -> Completion:
        messages = require_messages(messages, "t.complete(messages)")
        step_id = self.current_step
        step = next((s for s in self.working["plan"] if s["id"] == step_id), None) if step_id else None
        digest = hashlib.sha256(canonical_json(messages).encode("utf-8")).hexdigest()[:16]
        call_key = f"{step_id or '-'}#{_attempt_tag(step)}#{self.call_index}:{digest}"
        self.call_index += 1
        cached = self.llm_cache.get(call_key)
        if cached:
            self.report(f"{step_id or 'task'}: model reply reused from the checkpoint (no new call)")
            return cached
        try:
            c = self.model.complete(messages, **opts)
        except LlmCallError as err:
            call = {"model": err.model, "tokens_in": 0, "tokens_out": 0, "latency_ms": round(err.latency_ms), "retries": err.retries, "retry_reasons": err.retry_reasons, "error": redact(str(err), self.env)}
            if step_id:
                call["step_id"] = step_id
            self.working["run"]["llm_calls"].append(call)
            raise
        cost = estimate_cost_usd(c.model, c.tokens_in, c.tokens_out, self.env)
        last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)

        def record(d: dict[str, Any]) -> None:
            run = d["run"]
            run["model"] = c.model
            run["tokens_in"] += c.tokens_in
            run["tokens_out"] += c.tokens_out
            run["cost_usd"] += cost
            call = {"model": c.model, "tokens_in": c.tokens_in, "tokens_out": c.tokens_out, "latency_ms": c.latency_ms, "retries": c.retries, "retry_reasons": list(c.retry_reasons), "cost_usd": cost}
            if step_id:
                call = {"step_id": step_id, **call}
            run["llm_calls"].append(call)
            s = next((x for x in d["plan"] if x["id"] == step_id), None) if step_id else None
            if s is not None:
                s["tokens_in"] = s.get("tokens_in", 0) + c.tokens_in
                s["tokens_out"] = s.get("tokens_out", 0) + c.tokens_out

        history = []
        if last_user:
            history.append({"role": "user", "content": redact(last_user["content"], self.env), "step_id": step_id, "call_key": call_key})
        history.append({"role": "assistant", "content": c.text, "step_id": step_id, "call_key": call_key, "model": c.model, "tokens_in": c.tokens_in, "tokens_out": c.tokens_out})
        self.save(record, append_history=history, source=boundary("model reply"))
        self.llm_cache[call_key] = c
        return c

    def remember(self, key: str, action: Callable[[], T]) -> T:
        require_str(key, "t.remember(key, action)", "key", empty=False)
        require_callable(action, f"t.remember({key!r}, action)", "action")
        step_id = self.current_step
        mark = f"{step_id or '-'}:{key}"
        if mark in self.remember_keys:
            raise OperationError("invalid", f'remember("{key}") was called twice in {"step " + step_id if step_id else "the task"}; give each action its own key')
        self.remember_keys.add(mark)
        step = next((s for s in self.working["plan"] if s["id"] == step_id), None) if step_id else None
        call_key = f"remember:{step_id or '-'}#{_attempt_tag(step)}:{key}"
        saved = self.remembered.get(call_key)
        if saved is not None:
            self.report(f"{step_id or 'task'}: {key}: result reused from the checkpoint (not run again)")
            return json.loads(saved)  # type: ignore[no-any-return]
        started = time.monotonic()
        value = action()
        try:
            text = json.dumps(_redact_in(to_plain(value), self.env), separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError) as err:
            raise OperationError("invalid", f'remember("{key}"): the action\'s result cannot be saved as JSON ({err}); return plain data') from None
        elapsed = round((time.monotonic() - started) * 1000)
        self.save(
            lambda d: None,
            append_history=[{"role": "tool", "content": text, "step_id": step_id, "call_key": call_key, "remember_key": key, "elapsed_ms": elapsed}],
            source=boundary(f"remembered {key}"),
        )
        self.remembered[call_key] = text
        self.event("log", step_id, {"message": f"{key}: result saved", "remembered": key, "elapsed_ms": elapsed})
        return json.loads(text)  # type: ignore[no-any-return]

    # ---- phases, humans, recoveries --------------------------------------------------------

    def enter_phase(self, name: str) -> None:
        if self.working["phase"] == name:
            return
        previous = self.working["phase"]
        self.save(lambda d: d.__setitem__("phase", name), source=boundary(f"phase {name}"))
        self.report(f"phase: {previous} → {name}")

    def wait_for_human(self, reason: str) -> Optional[str]:
        key = f"{self.current_step or '-'}:{self.wait_index}"
        self.wait_index += 1
        existing = next((w for w in self.working.get("human_waits", []) if w.get("key") == key), None)
        if existing and existing.get("resolved_at"):
            return existing.get("note")
        clean = redact(reason, self.env)
        step_id = self.current_step

        def wait(d: dict[str, Any]) -> None:
            waits = d.setdefault("human_waits", [])
            if not any(w.get("key") == key for w in waits):
                waits.append({"key": key, "reason": clean, "requested_at": now_iso()})
            d["status"] = "waiting_human"
            d["resume_hint"] = f"waiting for a human{' in ' + step_id if step_id else ''}: {clean}. When ready: {hint(d, 'resume')}"

        self.save(wait, source=boundary("waiting for a human"))
        raise WaitingForHuman(clean)

    def record_recovery(self, what: str, fix: str, verification: str) -> None:
        clean = {"what": redact(what, self.env), "fix": redact(fix, self.env), "verification": redact(verification, self.env)}
        if self.current_step:
            self.step_recovery = clean
        step_id = self.current_step
        self.save(lambda d: d["errors"].append({"at": now_iso(), "step_id": step_id, **clean}), source=boundary("recovery recorded"))
        if self.current_step:
            self.step_recovery = None

    def outcome(self, status: str, message: str, nxt: Optional[str]) -> Outcome:
        return Outcome(self.task_id, status, self.working["version"], redact(message, self.env), nxt)

    def record_stop(self, request: dict[str, Any]) -> Outcome:
        """Save that a person stopped the run: the task stays `running` with no holder (shown interrupted), and
        `recovery.stopped` keeps automatic recovery away from it until a person resumes it."""
        by = redact(str(request.get("by") or "someone"), self.env)
        at = request.get("at") or now_iso()
        reason = redact(request["reason"], self.env) if request.get("reason") else None

        def stop(d: dict[str, Any]) -> None:
            d["status"] = "running"
            d["recovery"]["stopped"] = {"by": by, "at": at, **({"reason": reason} if reason else {})}
            d["resume_hint"] = f"stopped by {by} at {at}{f' ({reason})' if reason else ''}; continue with {hint(d, 'resume')}"

        self.save(stop, source={"kind": "stop", "actor": by, "note": f"stopped: {reason}" if reason else "stopped by a person"})
        self.event("runner", None, {"status": "stopped", "by": by, **({"reason": reason} if reason else {})})
        out = self.outcome("running", f"task {self.task_id} stopped by {by}", f"continue: {next_step(self.working, 'resume')}")
        out.stopped = True
        return out

    # ---- the end of a drive ----------------------------------------------------------------

    def finish_done(self) -> Outcome:
        open_steps = [s for s in self.working["plan"] if s["status"] not in ("done", "skipped")]

        def done(d: dict[str, Any]) -> None:
            for s in d["plan"]:
                if s["status"] not in ("done", "skipped"):
                    s.update(status="skipped", skip_reason="the agent finished without running it")
            d.update(status="done", phase=DONE_PHASE, resume_hint="finished: nothing left to resume")
            d["recovery"]["auto_attempts"] = 0

        self.save(done, source=boundary("task done"))
        self.event("runner", None, {"status": "done"})
        skipped = f" ({len(open_steps)} step(s) the agent did not run were marked skipped)" if open_steps else ""
        return self.outcome("done", f"task {self.task_id} finished{skipped}", None)

    def finish_error(self, err: BaseException, on_failure: Optional[Callable[["_Engine"], Optional[Outcome]]]) -> Outcome:
        if isinstance(err, TaskFolderGoneError):
            return self.outcome(self.working["status"], str(err), None)
        if isinstance(err, LeaseLostError):
            return self.outcome(self.working["status"], str(err), "another runner took the task over; check it with `waystation tail`")
        if isinstance(err, StopRequested):
            return self.record_stop(err.request)
        if isinstance(err, WaitingForHuman):
            self.event("runner", None, {"status": "waiting_human", "reason": err.reason})
            return self.outcome("waiting_human", f"task {self.task_id} is waiting for a human: {err.reason}", f"when ready: {next_step(self.working, 'resume')}")
        if not isinstance(err, StepFailed):
            message = redact(str(err) or type(err).__name__, self.env)

            def failed(d: dict[str, Any]) -> None:
                d["status"] = "failed"
                d["errors"].append({"at": now_iso(), "step_id": None, "what": message})
                d["resume_hint"] = f"the agent failed outside a step: {message}. Fix the cause and {run_hint(d, 'resume')}"

            self.save(failed, source=boundary("failed outside a step"))
        replaced = on_failure(self) if on_failure else None
        if replaced:
            return replaced
        self.event("runner", None, {"status": "failed"})
        return self.outcome("failed", f"task {self.task_id} failed: {self.working['resume_hint']}", f"fix the cause, then: {next_step(self.working, 'resume')}")


class _StepOutputError(Exception):
    pass


#: How a step's failure begins when its result is one the checkpoint cannot hold (task-engine.ts says the same).
_UNSAVABLE = "the step's outcome cannot be saved as a valid checkpoint: "


def boundary(note: str) -> dict[str, Any]:
    """The source of a version saved at one of the runtime's save boundaries, saying which (the history's line for it),
    in the words of the TypeScript runtime (task-engine.ts)."""
    return {"kind": "runtime", "note": note}


def effect_boundary(type_: str, key: str, what: str) -> dict[str, Any]:
    """The source of a save before or after a side effect (see boundary)."""
    return boundary(f"effect {type_} (key {key}): {what}")


def _attempt_tag(step: Optional[dict[str, Any]]) -> str:
    """What tells one attempt of a step from the next in the keys of its recorded model replies and
    remembered results: its failures, and the reruns a person asked for (a rewind), so neither replays
    what an earlier attempt recorded. The same tag as task-engine.ts."""
    failures = int((step or {}).get("failures", 0) or 0)
    reruns = int((step or {}).get("reruns", 0) or 0)
    return f"{failures}r{reruns}" if reruns > 0 else str(failures)


def _upsert_artifact(d: dict[str, Any], a: dict[str, Any]) -> None:
    for i, x in enumerate(d["artifacts"]):
        if x["path"] == a["path"]:
            d["artifacts"][i] = a
            return
    d["artifacts"].append(a)


# ---- the context an agent sees ----------------------------------------------------------------


class TaskContext:
    """What a running task offers its agent. Each method that crosses a save boundary saves."""

    def __init__(self, engine: _Engine) -> None:
        self._e = engine

    @property
    def task_id(self) -> str:
        return self._e.task_id

    @property
    def root(self) -> str:
        """The checkpoint directory."""
        return self._e.root

    @property
    def options(self) -> dict[str, Any]:
        return (self._e.working.get("agent") or {}).get("options", {})

    @property
    def goal(self) -> str:
        return self._e.working["goal"]

    @property
    def plan(self) -> list[dict[str, str]]:
        """The stored plan (ids and names): the truth on resume."""
        return [{"id": s["id"], "name": s["name"]} for s in self._e.working["plan"]]

    @property
    def checkpoint(self) -> dict[str, Any]:
        """A copy of the last saved checkpoint."""
        return copy_json(self._e.working)

    @property
    def resumed(self) -> Optional[ResumeContext]:
        """Set when this run continues an earlier one."""
        return self._e.resumed

    @property
    def model(self) -> Model:
        return self._e.model

    def step(self, step_id: str, fn: Optional[Callable[[], T]] = None) -> Any:
        """Run a step once and save its result; a step already done returns its stored result without running.

        Called with a function, it runs it and returns the result as stored (plain JSON: a tuple comes back
        a list, 1.0 as 1), which is what a resume returns for the step too. Without one it is a decorator:
        ``@t.step("draft")`` over ``def draft(): ...`` runs it at once and binds the name to the result;
        a ``t.step("draft")`` never applied to a function is refused at the next call on the task.
        """
        self._e.guard(f"t.step({step_id!r:.60})")
        require_str(step_id, "t.step(step_id, fn)", "step_id", empty=False)
        if fn is not None:
            return self._e.run_step(step_id, fn)
        self._e.undecorated = step_id

        def decorate(f: Callable[[], T]) -> Any:
            if self._e.undecorated == step_id:
                self._e.undecorated = None
            self._e.guard(f"t.step({step_id!r:.60})")
            return self._e.run_step(step_id, f)

        return decorate

    def skip(self, step_id: str, reason: str) -> None:
        """Mark a planned step skipped, with the reason, without running it."""
        self._e.guard(f"t.skip({step_id!r:.60})")
        self._e.skip_step(require_str(step_id, "t.skip(step_id, reason)", "step_id", empty=False), require_str(reason, "t.skip(step_id, reason)", "reason"))

    def effect(self, type: str, key: str, perform: Callable[[str], T], request: Any = None, probe: Optional[Callable[[dict[str, Any]], ProbeResult]] = None) -> Any:
        """Perform an outside effect at most once: the intent (with `key`) is saved before `perform(key)`, the outcome after.

        Returns the outcome as stored (plain JSON), as a resume returns it. `probe(effect)` answers
        ``{"happened": bool, "outcome": ...}`` for an effect whose outcome was never recorded (a crash
        mid-call); without one such an effect waits for a human. An outcome that cannot be stored (not
        JSON) raises EffectOutcomeNotStored, with the effect recorded as done: it happened.
        """
        self._e.guard(f"t.effect({type!r:.40})")
        return self._e.run_effect(type, key, perform, request, probe)

    def artifact(self, path: str, type: str = "file") -> dict[str, Any]:
        """Record a file the task produced (sha256 and size, checked on resume); with its step when inside one.

        `path` is relative to the checkpoint directory (DIR), or absolute.
        """
        self._e.guard(f"t.artifact({path!r:.80})")
        return self._e.record_artifact(require_path(path, "t.artifact(path)"), require_str(type, "t.artifact(path, type)", "type", empty=False))

    def write_artifact(self, path: str, content: Union[str, bytes], type: str = "file") -> dict[str, Any]:
        """Write a file atomically (temp, fsync, rename), then record it as an artifact; `path` as for `artifact`."""
        self._e.guard(f"t.write_artifact({path!r:.80})")
        path = require_path(path, "t.write_artifact(path, content)")
        data = require_content(content, f"t.write_artifact({path!r:.80}, content)")
        require_str(type, "t.write_artifact(path, content, type)", "type", empty=False)
        files.write_file_atomic(self._e.resolve(path), data)
        return self._e.record_artifact(path, type)

    def complete(self, messages: list[dict[str, str]], **opts: Any) -> Completion:
        """Call the model: tokens, cost and latency are recorded and the checkpoint saved; a rerun after a crash reuses the reply."""
        self._e.guard("t.complete(messages)")
        return self._e.complete(messages, **opts)

    def remember(self, key: str, action: Callable[[], T]) -> T:
        """Run a costly action once and save its (JSON) result; a step rerun after a crash gets the saved result."""
        self._e.guard(f"t.remember({key!r:.60})")
        return self._e.remember(key, action)

    def phase(self, name: str) -> None:
        """Enter a phase (the phase before it is complete: a save)."""
        self._e.guard(f"t.phase({name!r:.60})")
        self._e.enter_phase(require_str(name, "t.phase(name)", "name", empty=False))

    def wait_for_human(self, reason: str) -> Optional[str]:
        """Save and stop (raises WaitingForHuman) until a human resumes; once resumed, returns the human's note."""
        self._e.guard("t.wait_for_human(reason)")
        return self._e.wait_for_human(require_str(reason, "t.wait_for_human(reason)", "reason", empty=False))

    def record_recovery(self, what: str, fix: str, verification: str) -> None:
        """Record an error, its fix and how the fix was verified, and save."""
        self._e.guard("t.record_recovery(what, fix, verification)")
        call = "t.record_recovery(what, fix, verification)"
        self._e.record_recovery(require_str(what, call, "what"), require_str(fix, call, "fix"), require_str(verification, call, "verification"))

    def hint(self, text: str) -> None:
        """The hint the next resume starts from (saved with the next save)."""
        self._e.guard("t.hint(text)")
        self._e.working["resume_hint"] = redact(require_str(text, "t.hint(text)", "text"), self._e.env)

    def log(self, message: str, **data: Any) -> None:
        """A line for the task's event log and the live activity feed (secrets scrubbed)."""
        self._e.guard("t.log(message)")
        clean = redact(require_str(message, "t.log(message, **data)", "message"), self._e.env)
        try:
            plain = to_plain(data)
        except (TypeError, ValueError) as err:
            raise ArgumentError(f"t.log({message[:60]!r}, **data): data cannot be stored as JSON ({err})") from None
        self._e.report(clean)
        self._e.event("log", self._e.current_step, {"message": clean, **_redact_in(plain, self._e.env)})


# ---- operations ------------------------------------------------------------------------------


def generate_task_id(agent_name: str) -> str:
    """A readable unique id: agent name, UTC date and time, a short random suffix."""
    slug = re.sub(r"^-|-$", "", re.sub(r"[^a-z0-9]+", "-", agent_name.lower())) or "task"
    return f"{slug}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(2)}"


def load_for_write(store: Store, task_id: str) -> dict[str, Any]:
    """The task's newest checkpoint, refusing what must not be written (OperationError)."""
    # Asked first: the writer takes a task that is not there for one with no versions, and says so as unreadable.
    if not store.exists(task_id):
        raise OperationError("not-found", f'there is no task "{task_id}" in {store.root}; nothing was written')
    try:
        store.writer(task_id).invalidate()
        store.writer(task_id).last_version()
        return store.load(task_id)
    except TaskNotFoundError:
        raise OperationError("not-found", f'there is no task "{task_id}" in {store.root}') from None
    except ReadOnlyTaskError as err:
        raise OperationError("future-schema", f"{err}. Nothing was written.") from None
    except TaskReadError as err:
        raise OperationError("unreadable", f"task {task_id} cannot be saved after its newest version: {err}") from None


class Run:
    """One drive of one task, under its lease: `open` (create, or the first five steps of resuming), then the agent, then `close`.

    The `task()` context manager and `run_agent()` are built on it.
    """

    def __init__(
        self,
        root: str,
        task_id: str,
        agent: Agent,
        *,
        model: Optional[Model] = None,
        report: Optional[Callable[[str], None]] = None,
        actor: Optional[str] = None,
        env: Optional[dict[str, str]] = None,
        command_sha256: Optional[str] = None,
    ) -> None:
        if not is_task_id(task_id):
            raise OperationError("invalid", f'"{task_id}" cannot be a task id: use letters, digits, ".", "_" and "-", starting with a letter or digit')
        self.given_root = os.fspath(root)
        self.root = os.path.abspath(root)
        self.store = Store(self.root)
        self.task_id = task_id
        self.agent = agent
        self.model = model or model_from_env(env)
        self.report = report
        self.actor = actor or os.environ.get("USER") or os.environ.get("USERNAME") or "human"
        self.env = os.environ if env is None else env
        self.lease: Optional[Lease] = None
        self.engine: Optional[_Engine] = None
        self.early: Optional[Outcome] = None
        #: For a command agent the app runs: the hash of its command's files now (the runner hands it over).
        self.command_sha256 = command_sha256

    def code_changed(self, cp: dict[str, Any]) -> bool:
        """Whether a command agent's files changed since the task recorded them: both hashes known and different."""
        ref = cp.get("agent") or {}
        recorded = ref.get("command_sha256")
        return bool(ref.get("command") and recorded and self.command_sha256 and recorded != self.command_sha256)

    def _take_lease(self) -> None:
        try:
            self.lease = acquire_lease(self.store.task_dir(self.task_id), self.task_id, owner="python-runner")
        except LeaseHeldError as err:
            raise OperationError("busy", str(err)) from None

    def _engine(self, cp: dict[str, Any]) -> _Engine:
        self.engine = _Engine(self.store, self.root, cp, self.lease, self.model, self.agent.probes, self.report, self.env)
        return self.engine

    def release(self) -> None:
        """Settle the segment (checkpoint.json catches up), then let the lease go; the agent's TaskContext is closed."""
        if self.engine is not None:
            self.engine.closed = True
        try:
            self.store.settle(self.task_id)
        finally:
            if self.lease is not None:
                try:
                    self.lease.release()
                except OSError:
                    pass
                self.lease = None

    # -- start --

    def start(self, options: Optional[dict[str, Any]] = None, mode: str = "manual", max_auto_attempts: int = DEFAULT_MAX_AUTO_ATTEMPTS, agent_ref: Optional[dict[str, Any]] = None) -> None:
        """Create the task (version 1) and take its lease."""
        if not is_task_id(self.task_id):
            raise OperationError("invalid", f'"{self.task_id}" cannot be a task id: use letters, digits, ".", "_" and "-", starting with a letter or digit')
        if mode not in MODES:
            raise OperationError("invalid", f"the recovery mode must be manual, auto or confirm, not {mode!r}")
        _require_directory(self.given_root)
        if self.store.exists(self.task_id) and self.store.newest_version(self.task_id) > 0:
            raise OperationError("exists", f"task {self.task_id} already exists in {self.root}; resume it instead")
        opts = self.agent.parse_options(options)
        env: dict[str, Any] = {"task_id": self.task_id, "root": self.root, "confined": self.env.get(CONFINED_ENV) == "1"}
        try:
            if self.agent.resolve_options:
                opts = self.agent.resolve_options(opts, env)
            steps = self.agent.steps(opts, env)
            goal = self.agent.goal(opts) if callable(self.agent.goal) else self.agent.goal
        except OperationError:
            raise
        except Exception as err:  # noqa: BLE001 - the agent's verdict on its options
            raise OperationError("invalid", f"agent {self.agent.name} could not start the task: {redact(str(err), self.env)}. Nothing was written.") from None
        if not isinstance(goal, str):
            raise ArgumentError(f"the goal of agent {self.agent.name} must be a string, got {type(goal).__name__}. Nothing was written.")
        now = now_iso()
        cp: dict[str, Any] = {
            "schema_version": CURRENT_SCHEMA_VERSION,
            "task_id": self.task_id,
            "task_name": self.agent.name,
            "status": "running",
            "phase": START_PHASE,
            "goal": goal,
            "plan": [{"id": s.id, "name": s.name, "status": "pending", "attempts": 0, "output_schema": s.output_schema} for s in steps],
            "current_step": 0,
            "total_steps": len(steps),
            "artifacts": [],
            "side_effects": [],
            "resume_hint": f"start at {steps[0].id} ({steps[0].name})" if steps else "nothing planned",
            "recovery": {"mode": mode, "pending_approval": None, "decisions": [], "auto_attempts": 0, "max_auto_attempts": max_auto_attempts},
            "errors": [],
            "run": {"created_at": now, "updated_at": now, "model": self.model.model, "tokens_in": 0, "tokens_out": 0, "cost_usd": 0, "elapsed_ms": 0, "llm_calls": []},
            "source": {"kind": "runtime", "note": "task created"},
            "history": {"count": 0, "head": None},
            "agent": {**(agent_ref or {}), "name": self.agent.name, "options": opts},
        }
        try:
            check_checkpoint({**cp, "version": 1}, f"task {self.task_id}")
        except SchemaError as err:
            raise OperationError("invalid", f"agent {self.agent.name} describes a task that is not a valid checkpoint: {err}") from None
        try:
            created = self.store.create(cp)
        except Exception as err:
            from .errors import ConflictError

            if isinstance(err, ConflictError):
                raise OperationError("exists", f"task {self.task_id} was created by another runner at the same moment; nothing was written") from None
            raise
        self._take_lease()
        engine = self._engine(created)
        engine.event("runner", None, {"status": "started", "agent": self.agent.name, "mode": mode, "pid": os.getpid(), "language": "python"})

    # -- resume: the first five of the six steps --

    def resume(self, trigger: str = "human", rerun_drifted: bool = False, settle: Optional[dict[str, bool]] = None, note: Optional[str] = None, approval: Optional[dict[str, str]] = None) -> Optional[Outcome]:
        """Load, verify, find the next step, reconcile effects, rebuild the context. Returns an Outcome when the agent must not run now."""
        self._check_resumable(load_for_write(self.store, self.task_id))
        self._take_lease()
        # 1. Load the latest version, again under the lease.
        cp = load_for_write(self.store, self.task_id)
        self._check_resumable(cp)
        engine = self._engine(cp)
        if cp["status"] == "done" and not rerun_drifted:
            return engine.outcome("done", f"task {self.task_id} is already done; nothing to resume", None)
        pending = cp["recovery"].get("pending_approval")
        if approval:
            if not pending or pending["id"] != approval["id"]:
                raise OperationError("no-approval", f"task {self.task_id} has no pending approval {approval['id']}; nothing was written")
        elif cp["status"] == "waiting_approval" and cp["recovery"]["mode"] == "confirm":
            return engine.outcome(
                "waiting_approval",
                f"task {self.task_id} waits for approval of its resume plan:\n  " + "\n  ".join(describe_plan(pending["plan"], cp)),
                f"approve: {next_step(cp, 'approve')}   reject: {next_step(cp, 'reject', ' --reason TEXT')}",
            )
        max_auto = int(cp["recovery"].get("max_auto_attempts", DEFAULT_MAX_AUTO_ATTEMPTS))
        if trigger == "auto" and cp["recovery"]["auto_attempts"] >= max_auto:
            reason = f"automatic recovery gave up after {cp['recovery']['auto_attempts']} attempt(s)"
            if cp["resume_hint"].startswith(reason):
                return engine.outcome(cp["status"], reason, f"resume by hand: {next_step(cp, 'resume')}")

            def give_up(d: dict[str, Any]) -> None:
                if d["status"] == "running":
                    d["status"] = "failed"
                    d["errors"].append({"at": now_iso(), "step_id": None, "what": "interrupted; automatic recovery exhausted"})
                d["resume_hint"] = f"{reason}; resume by hand: {hint(d, 'resume')}"

            engine.save(give_up, source={"kind": "runtime", "note": reason})
            return engine.outcome(engine.working["status"], reason, f"resume by hand: {next_step(cp, 'resume')}")
        # A human's word on uncertain effects without a probe is part of the world being verified.
        if settle:
            for key in settle:
                if not any(e["idempotency_key"] == key for e in cp["side_effects"]):
                    raise OperationError("invalid", f'task {self.task_id} has no side effect with idempotency key "{key}"; nothing was written')

            def settled(d: dict[str, Any]) -> None:
                for key, happened in settle.items():
                    e = next(x for x in d["side_effects"] if x["idempotency_key"] == key)
                    if e["status"] == "done":
                        continue
                    e.update(status="done" if happened else "not_started", reconciliation="settled-by-human" if happened else "settled-by-human-retry", updated_at=now_iso())

            engine.save(settled, source={"kind": "runtime", "actor": (approval or {}).get("actor", self.actor), "note": "uncertain side effects settled by a human"})
        changed = self.code_changed(engine.working)
        if changed:
            engine.report(
                f"the files of the command agent {self.agent.name} changed since task {self.task_id} recorded them "
                f"(sha256 {engine.working['agent']['command_sha256'][:12]}… is now {(self.command_sha256 or '')[:12]}…); the remaining steps run with the new code"
            )
        # 2. Verify the outside world; 3. find the next step (the plan for 4. is decided here too).
        confirm = cp["recovery"]["mode"] == "confirm"
        decision = self._decide(engine.working, rerun_drifted or confirm)
        if engine.working["status"] == "done":
            # Only rerun_drifted gets here with a done task: it reruns what made a drifted artifact, and nothing else.
            # What it cannot rerun is said, and the done task is left as it is.
            if decision.blocking:
                raise OperationError("invalid", f"task {self.task_id} is done, and --rerun-drifted cannot rerun it: {' | '.join(decision.blocking)}; nothing was written")
            if decision.reset_from is None:
                return engine.outcome("done", f"task {self.task_id} is done and none of its artifacts drifted; nothing to rerun", None)
        if decision.blocking:
            return _stop_for_human(engine, decision.blocking)
        if confirm and not approval:
            return _request_approval(engine, decision.plan, "resume plan prepared for approval")
        if approval and not same_plan(engine.working["recovery"]["pending_approval"]["plan"], decision.plan):
            return _request_approval(engine, decision.plan, "the outside world changed since the plan was prepared; new plan awaits approval")
        actor = (approval or {}).get("actor", self.actor)
        reset_from = decision.reset_from
        phase = rerun_phase(self.store, engine.working, reset_from) if reset_from is not None else None

        def resumed(d: dict[str, Any]) -> None:
            if approval:
                d["recovery"]["decisions"].append({"approval_id": approval["id"], "decision": "approved", "by": approval["actor"], "at": now_iso()})
                d["recovery"]["pending_approval"] = None
            if reset_from is not None:
                reset = {s["id"] for s in d["plan"][reset_from:]}
                for s in d["plan"][reset_from:]:
                    if s["status"] in ("done", "skipped"):
                        s.update(status="pending", result_ref=None, finished_at=None)
                d["artifacts"] = [a for a in d["artifacts"] if not (a.get("step_id") and a["step_id"] in reset)]
                d["phase"] = phase
            d["recovery"]["auto_attempts"] = d["recovery"]["auto_attempts"] + 1 if trigger == "auto" else 0
            # A person's resume ends a stop; the runner's own never does.
            if trigger != "auto" and d["recovery"].get("stopped"):
                d["recovery"]["stopped"] = None
            if trigger != "auto":
                for w in d.get("human_waits", []):
                    if not w.get("resolved_at"):
                        w.update(resolved_at=now_iso(), by=actor, note=note)
            if changed and d.get("agent"):
                # The new hash is recorded with the resume, so the history shows when the code changed and who resumed with it.
                d["agent"]["previous_command_sha256"] = d["agent"]["command_sha256"]
                d["agent"]["command_sha256"] = self.command_sha256
            d["status"] = "running"
            d["resume_hint"] = f"resumed{' automatically' if trigger == 'auto' else ' by ' + actor}: {'; '.join(describe_plan(decision.plan, d))}"

        source = (
            {"kind": "approval", "actor": approval["actor"], "note": f"resume plan {approval['id']} approved{' (with the changed agent command)' if changed else ''}"}
            if approval
            else {"kind": "runtime", **({} if trigger == "auto" else {"actor": actor}), "note": f"resumed ({trigger}){'; the agent command changed since the last run' if changed else ''}"}
        )
        engine.save(resumed, source=source)
        # 4. Reconcile uncertain effects the agent can probe before running; the rest are probed where the step calls them.
        for eid in decision.plan["probe_effects"]:
            effect = next((e for e in engine.working["side_effects"] if e["id"] == eid), None)
            probe = self.agent.probes.get(effect["type"]) if effect else None
            if not effect or not probe:
                continue
            try:
                engine.settle_by_probe(effect, lambda e, p=probe: p(e, (engine.working.get("agent") or {}).get("options", {})))
            except Exception as err:  # noqa: BLE001 - a probe that cannot answer leaves the task failed, resumable
                message = redact(str(err), self.env)

                def probe_failed(d: dict[str, Any], effect: dict[str, Any] = effect, message: str = message) -> None:
                    d["status"] = "failed"
                    d["errors"].append({"at": now_iso(), "step_id": effect.get("step_id"), "what": f"probing {effect['type']} (key {effect['idempotency_key']}) failed: {message}"})
                    d["resume_hint"] = f"could not ask the outside world about {effect['type']} (key {effect['idempotency_key']}): {message}. Resume when it answers: {hint(d, 'resume')}"

                engine.save(probe_failed)
                return engine.outcome("failed", f"probing side effect {effect['id']} failed: {message}", f"when the service answers: {next_step(cp, 'resume')}")
        # 5. Rebuild a minimal context for the agent.
        engine.resumed = build_resume_context(engine.working)
        engine.load_llm_cache()
        ctx = engine.resumed
        engine.event("runner", None, {"status": "resumed", "trigger": trigger, "context": {"goal": ctx.goal, "decisions": ctx.decisions, "artifacts": len(ctx.artifacts), "next_step": ctx.next_step, "resume_hint": ctx.resume_hint}})
        nxt = ctx.next_step
        engine.report(f"resuming {self.task_id}: next {nxt['id'] + ' (' + nxt['name'] + ')' if nxt else 'nothing (all steps finished)'}")
        return None

    def _check_resumable(self, cp: dict[str, Any]) -> None:
        name = (cp.get("agent") or {}).get("name")
        if name and name != self.agent.name:
            raise OperationError("agent-mismatch", f"task {cp['task_id']} belongs to agent {name}, not {self.agent.name}; nothing was written")
        if cp["status"] == "halted":
            last = (cp["recovery"].get("decisions") or [None])[-1]
            by = f" (resume plan rejected by {last['by']} at {last['at']}{': ' + last['reason'] if last.get('reason') else ''})" if last else ""
            raise OperationError("halted", f"task {cp['task_id']} is halted{by}; it is not resumed. Nothing was written.")

    def _decide(self, cp: dict[str, Any], rerun_drifted: bool) -> Any:
        return decide_resume(cp, check_artifacts(self.root, cp), lambda e: e["type"] in self.agent.probes, rerun_drifted, self.code_changed(cp))

    def confirm_after_failure(self, engine: _Engine) -> Optional[Outcome]:
        """In confirm mode a failure is followed by a resume plan for a human to approve."""
        if engine.working["recovery"]["mode"] != "confirm":
            return None
        decision = self._decide(engine.working, True)
        if decision.blocking:
            return _stop_for_human(engine, decision.blocking)
        return _request_approval(engine, decision.plan, "failed: resume plan prepared for approval")

    # -- 6. continue --

    def context(self) -> TaskContext:
        assert self.engine is not None
        return TaskContext(self.engine)

    def finish(self, err: Optional[BaseException]) -> Outcome:
        """Record how the agent ended (done, failed, waiting) and return the outcome.

        An agent that ended normally past a `t.step(id)` given no function did not run that step: it
        ends failed with the refusal (`unfinished_step` gives it), not done with the step skipped.
        """
        assert self.engine is not None
        if err is None:
            return self.engine.finish_done()
        return self.engine.finish_error(err, self.confirm_after_failure)

    def unfinished_step(self) -> Optional[ArgumentError]:
        """The refusal of a `t.step(id)` the agent left without a function, or None."""
        return self.engine.undecorated_refusal() if self.engine is not None else None

    def drive(self) -> Outcome:
        """Run the agent to its end, a failure or a wait, saving as it goes."""
        try:
            self.agent.run(self.context())
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as err:  # noqa: BLE001 - every ending is recorded
            return self.finish(err)
        return self.finish(self.unfinished_step())


def _require_directory(root: str) -> None:
    """Refuse a checkpoint directory that is a file (or lies under one): nothing could be created in it."""
    path = os.path.abspath(root)
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        named = root if path == os.path.abspath(root) else f"{path} (in {root})"
        raise OperationError("invalid", f"{named} is not a directory; nothing was written")


def _request_approval(engine: _Engine, plan: dict[str, Any], note: str) -> Outcome:
    cp = engine.working
    pending = cp["recovery"].get("pending_approval")
    if not (pending and same_plan(pending["plan"], plan) and cp["status"] == "waiting_approval"):

        def ask(d: dict[str, Any]) -> None:
            d["recovery"]["pending_approval"] = {"id": f"approval-{secrets.token_hex(4)}", "requested_at": now_iso(), "plan": plan}
            d["status"] = "waiting_approval"
            d["resume_hint"] = f"a resume plan awaits approval ({'; '.join(describe_plan(plan, d))}): {hint(d, 'approve')} or {hint(d, 'reject', ' --reason TEXT')}"

        engine.save(ask, source={"kind": "runtime", "note": note})
        engine.event("runner", None, {"status": "waiting_approval", "plan": plan})
    return engine.outcome(
        "waiting_approval",
        f"task {cp['task_id']} waits for approval of its resume plan:\n  " + "\n  ".join(describe_plan(plan, engine.working)),
        f"approve: {next_step(cp, 'approve')}   reject: {next_step(cp, 'reject', ' --reason TEXT')}",
    )


def _stop_for_human(engine: _Engine, reasons: list[str]) -> Outcome:
    cp = engine.working
    text = " | ".join(reasons)
    if not (cp["status"] == "waiting_human" and cp["resume_hint"] == text):

        def stop(d: dict[str, Any]) -> None:
            d.update(status="waiting_human", resume_hint=text)
            d["recovery"]["pending_approval"] = None

        engine.save(stop, source={"kind": "runtime", "note": "resume stopped: verification needs a human"})
        engine.event("runner", None, {"status": "waiting_human", "reasons": reasons})
    return engine.outcome("waiting_human", f"task {cp['task_id']} needs a human before it can resume: {text}", f"resolve the above, then: {next_step(cp, 'resume')}")


# ---- what developers call --------------------------------------------------------------------


def _auto_backoff_ms(env: dict[str, str]) -> float:
    try:
        return max(0.0, float(env.get("WAYSTATION_AUTO_BACKOFF_MS", "1000")))
    except ValueError:
        return 1000.0


def _pending_approval(store: Store, task_id: str, actor: str) -> dict[str, str]:
    """The approval of the task's pending resume plan by `actor`; OperationError('no-approval') when it has none."""
    cp = load_for_write(store, task_id)
    pending = cp["recovery"].get("pending_approval")
    if not pending:
        raise OperationError("no-approval", f"task {task_id} has no pending approval (its status is {cp['status']}); nothing was written")
    return {"id": pending["id"], "actor": actor}


def run_agent(
    agent: Agent,
    root: str,
    task_id: Optional[str] = None,
    *,
    options: Optional[dict[str, Any]] = None,
    mode: str = "manual",
    max_auto_attempts: int = DEFAULT_MAX_AUTO_ATTEMPTS,
    model: Optional[Model] = None,
    report: Optional[Callable[[str], None]] = None,
    rerun_drifted: bool = False,
    settle: Optional[dict[str, bool]] = None,
    note: Optional[str] = None,
    approve: bool = False,
    actor: Optional[str] = None,
    agent_ref: Optional[dict[str, Any]] = None,
    env: Optional[dict[str, str]] = None,
    supervise: bool = True,
) -> Outcome:
    """Start the task, or resume it when it exists, and drive it; in auto mode, failures are resumed with backoff.

    With `supervise=False` no automatic resume happens here: the caller supervises (the app's runner does).

    `approve=True` approves the pending resume plan (confirm mode) and runs exactly it.
    Raises OperationError (nothing written) for bad input, a busy task, the wrong agent, a halted task.
    """
    # A caller's own code drives this run (unless waystation.main does): its command is unknown, so the hints name it
    # in words, or `waystation resume` where the directory registers the agent as a command.
    token = PROGRAM.set(PROGRAM.get() or caller_program(root, agent.name))
    try:
        env = os.environ if env is None else env
        task_id = task_id or generate_task_id(agent.name)
        command_sha256 = (agent_ref or {}).get("command_sha256")
        run = Run(root, task_id, agent, model=model, report=report, actor=actor, env=env, command_sha256=command_sha256)
        store = run.store
        exists = store.exists(task_id) and store.newest_version(task_id) > 0
        try:
            if not exists:
                run.start(options, mode, max_auto_attempts, agent_ref)
                outcome = run.drive()
            else:
                approval = _pending_approval(store, task_id, run.actor) if approve else None
                early = run.resume("human", rerun_drifted, settle, note, approval)
                outcome = early or run.drive()
        finally:
            run.release()
        # Auto mode: failures are resumed by the runner itself, with exponential backoff, up to the attempt limit.
        delay = _auto_backoff_ms(env)
        while supervise and outcome.status == "failed":
            cp = store.load(task_id)
            rec = cp["recovery"]
            if rec["mode"] != "auto" or rec["auto_attempts"] >= int(rec.get("max_auto_attempts", DEFAULT_MAX_AUTO_ATTEMPTS)):
                break
            if report:
                report(f"auto mode: resuming {task_id} in {delay / 1000:g}s (attempt {rec['auto_attempts'] + 1})")
            time.sleep(delay / 1000)
            delay *= 2
            run = Run(root, task_id, agent, model=model, report=report, actor=actor, env=env, command_sha256=command_sha256)
            try:
                early = run.resume("auto")
                outcome = early or run.drive()
            finally:
                run.release()
        return outcome
    finally:
        PROGRAM.reset(token)


class _BlockAgent(Agent):
    """The agent of a `with waystation.task(...)` block: its options are recorded values, never command-line flags."""

    def _check_option_names(self) -> None:
        pass


class task:  # noqa: N801 - used as `with waystation.task(...) as t:`
    """A task as a context manager: created when new, resumed (the six steps) when it exists.

    ``with waystation.task(DIR, "my-task", agent="my-agent", plan=[...], goal="...", mode="manual") as t:``
    runs the body with `t`, a TaskContext, under the task's lease. A body that ends normally marks the
    task done; a step that raises leaves it failed (StepFailed propagates), `t.wait_for_human` leaves it
    waiting (WaitingForHuman propagates). When the task must not run now (done already, waiting for
    approval, blocked on drift), entering raises `TaskNotRunnable` with the outcome. Once the block has
    ended, every call on `t` raises TaskClosedError and writes nothing.

    `plan`, `goal`, `options` and `mode` describe the task when it starts; a resume keeps what the task
    recorded. The ways out of a stop are `run_agent`'s: `approve=True` approves the pending resume plan
    (confirm mode) and runs exactly it, `settle={KEY: True}` (or False) says whether an uncertain effect
    with no probe happened, `rerun_drifted=True` reruns the steps whose artifacts changed, `note` answers
    a wait for a human, `actor` names who decided. Waystation's own `resume` and `approve` do not run such
    a block's tasks, so the hints it saves and raises name this script's command line instead.
    """

    def __init__(
        self,
        root: str,
        task_id: str,
        *,
        agent: Union[str, Agent] = "python-task",
        plan: Optional[list[PlanItem]] = None,
        goal: str = "",
        options: Optional[dict[str, Any]] = None,
        mode: str = "manual",
        probes: Optional[dict[str, Callable[[dict[str, Any], dict[str, Any]], ProbeResult]]] = None,
        model: Optional[Model] = None,
        report: Optional[Callable[[str], None]] = None,
        rerun_drifted: bool = False,
        note: Optional[str] = None,
        approve: bool = False,
        settle: Optional[dict[str, bool]] = None,
        actor: Optional[str] = None,
    ) -> None:
        if isinstance(agent, Agent):
            self.agent = agent
        else:
            if options is not None and not isinstance(options, dict):
                raise ArgumentError(f"waystation.task(options=...): options must be a dict, got {type(options).__name__}")
            props = {k: {"default": v} for k, v in (options or {}).items()}
            self.agent = _BlockAgent(
                name=require_str(agent, "waystation.task(agent=...)", "agent", empty=False),
                run=lambda ctx: None,
                plan=planned_steps(plan or [], "waystation.task(plan=...)"),  # type: ignore[arg-type]
                goal=require_str(goal, "waystation.task(goal=...)", "goal"),
                probes=probes or {},
                options={"type": "object", "properties": props},
            )
        if settle is not None and (not isinstance(settle, dict) or not all(isinstance(k, str) and isinstance(v, bool) for k, v in settle.items())):
            raise ArgumentError("waystation.task(settle=...): settle must map idempotency keys (str) to whether the effect happened (bool)")
        self.run = Run(root, task_id, self.agent, model=model, report=report, actor=actor)
        self.mode = mode
        self.options = options
        self.rerun_drifted = rerun_drifted
        self.note = note
        self.approve = approve
        self.settle = settle
        self.outcome: Optional[Outcome] = None
        self._program: Any = None

    def __enter__(self) -> TaskContext:
        # The hints this block saves and raises name the script that runs it: `waystation resume` would refuse its task.
        self._program = PROGRAM.set(script_program())
        store = self.run.store
        try:
            if store.exists(self.run.task_id) and store.newest_version(self.run.task_id) > 0:
                approval = _pending_approval(store, self.run.task_id, self.run.actor) if self.approve else None
                early = self.run.resume("human", self.rerun_drifted, self.settle, self.note, approval)
                if early is not None:
                    self.outcome = self._filled(early)
                    raise TaskNotRunnable(self.outcome)
            else:
                self.run.start(self.options, self.mode)
        except BaseException:
            self.run.release()
            self._forget_program()
            raise
        return self.run.context()

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> bool:
        refusal: Optional[ArgumentError] = None
        try:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                return False
            if exc is None:
                refusal = self.run.unfinished_step()
            self.outcome = self._filled(self.run.finish(exc or refusal))
        finally:
            self.run.release()
            self._forget_program()
        if refusal is not None:
            raise refusal
        return False

    def _filled(self, outcome: Outcome) -> Outcome:
        """The outcome with `<DIR>` in its commands replaced by the directory as it was given."""
        root = self.run.given_root
        return dataclasses.replace(outcome, message=fill_directory(outcome.message, root), next=fill_directory(outcome.next, root) if outcome.next else None)

    def _forget_program(self) -> None:
        if self._program is not None:
            PROGRAM.reset(self._program)
            self._program = None


class TaskNotRunnable(OperationError):
    """The task must not run now (already done, waiting for approval, blocked on drift); `outcome` says why."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__("not-runnable", outcome.message + (f"\n{outcome.next}" if outcome.next else ""))
        self.outcome = outcome


# ---- operations that run no agent code --------------------------------------------------------


def _with_engine(root: str, task_id: str, owner: str, fn: Callable[[_Engine, dict[str, Any]], Outcome]) -> Outcome:
    store = Store(root)
    load_for_write(store, task_id)
    try:
        lease = acquire_lease(store.task_dir(task_id), task_id, owner=owner, heartbeat_ms=0)
    except LeaseHeldError as err:
        raise OperationError("busy", str(err)) from None
    try:
        cp = load_for_write(store, task_id)
        engine = _Engine(store, os.path.abspath(root), cp, lease, model_from_env(), {}, None)
        # Called from a caller's own code: the hints an operation saves name the task's program as run_agent's do.
        program = PROGRAM.set(PROGRAM.get() or caller_program(root, (cp.get("agent") or {}).get("name")))
        try:
            return fn(engine, cp)
        finally:
            PROGRAM.reset(program)
    finally:
        store.settle(task_id)
        lease.release()


def request_stop(root: str, task_id: str, actor: Optional[str] = None, reason: Optional[str] = None) -> dict[str, Any]:
    """Ask the runner that drives `task_id` (in any language) to stop at its next step or effect.

    Writes the stop request beside the run's lease entry (docs/FORMAT.md, "The lease") and returns it;
    the runner saves the stop and lets the lease go. Refused (OperationError, nothing written) when no
    live runner holds the task. Ending a runner that does not stop is `waystation stop --force`.
    """
    store = Store(root)
    if not store.exists(task_id):
        raise OperationError("not-found", f'there is no task "{task_id}" in {store.root}; nothing was written')
    task_dir = store.task_dir(task_id)
    current = highest_entry(os.path.join(task_dir, "lease"))
    if not current or not current[1] or not lease_is_live(current[1]):
        raise OperationError("invalid", f"task {task_id} is not driven by a runner now; there is nothing to stop. Nothing was written.")
    return write_stop_request(task_dir, current[0], actor or os.environ.get("USER") or "human", reason)


def reject_task(root: str, task_id: str, reason: str, actor: Optional[str] = None) -> Outcome:
    """Reject the pending resume plan: record who, when and why, and halt the task."""
    reason = (reason or "").strip()
    if not reason:
        raise OperationError("invalid", "a rejection needs a reason; nothing was written")
    who = actor or os.environ.get("USER") or "human"

    def reject(engine: _Engine, cp: dict[str, Any]) -> Outcome:
        pending = cp["recovery"].get("pending_approval")
        if not pending:
            raise OperationError("no-approval", f"task {task_id} has no pending approval (its status is {cp['status']}); nothing was written")
        at = now_iso()

        def halt(d: dict[str, Any]) -> None:
            d["recovery"]["decisions"].append({"approval_id": pending["id"], "decision": "rejected", "by": who, "at": at, "reason": reason})
            d["recovery"]["pending_approval"] = None
            d["status"] = "halted"
            d["resume_hint"] = f"halted: resume plan {pending['id']} rejected by {who} at {at}: {reason}"

        engine.save(halt, source={"kind": "approval", "actor": who, "note": f"resume plan {pending['id']} rejected: {reason}"})
        engine.event("runner", None, {"status": "halted", "by": who, "reason": reason})
        return engine.outcome("halted", f"task {task_id} halted: {who} rejected the resume plan ({reason})", None)

    return _with_engine(root, task_id, "reject", reject)


#: The steps after an edited one that ran on its old value, and so run again (unless a person keeps them).
RERUN_ON_EDIT = ("done", "failed", "running")


def edit_step_result(root: str, task_id: str, step: str, value: Any, actor: Optional[str] = None, expected_version: Optional[int] = None, later: str = "rerun") -> Outcome:
    """Replace a step's result with a human's value (checked against its output schema), done steps too.

    `later="rerun"` (the default) sets the steps after it that ran back to pending, since they were computed
    from the old value; `later="keep"` says they still stand.
    """
    who = actor or os.environ.get("USER") or "human"
    if later not in ("rerun", "keep"):
        raise OperationError("invalid", f'later must be "rerun" or "keep", not {later!r}; nothing was written')

    def edit(engine: _Engine, cp: dict[str, Any]) -> Outcome:
        if expected_version is not None and cp["version"] != expected_version:
            raise OperationError("moved", f"task {task_id} moved on to version {cp['version']} since version {expected_version} was opened for editing; nothing was written")
        if cp["status"] == "halted":
            raise OperationError("halted", f"task {task_id} is halted; its steps cannot be edited, since an edit would resume it. Nothing was written.")
        index = engine.step_index(step)
        if index < 0:
            raise OperationError("unknown-step", f"task {task_id} has no step \"{step}\"; its steps are: {', '.join(s['id'] for s in cp['plan'])}. Nothing was written.")
        s0 = cp["plan"][index]
        problems = validate(to_plain(value), s0["output_schema"], "value") if s0.get("output_schema") else []
        if problems:
            raise OperationError("invalid", f"the value does not fit step {s0['id']}'s output schema: {'; '.join(problems)}. Nothing was written.")
        before = engine.stored_result(s0)
        at = now_iso()
        had_pending = bool(cp["recovery"].get("pending_approval"))
        rerun_from = next((i for i, x in enumerate(cp["plan"]) if i > index and x["status"] in RERUN_ON_EDIT), None) if later == "rerun" else None
        phase = rerun_phase(engine.store, cp, rerun_from) if rerun_from is not None else None

        def apply(d: dict[str, Any]) -> None:
            s = d["plan"][index]
            if s["status"] == "failed" and s.get("error"):
                d["errors"].append({"at": at, "step_id": s["id"], "what": s["error"]["message"], "fix": f"result replaced by a human edit ({who})", "verification": "the value satisfies the step's output schema" if s.get("output_schema") else "no output schema is declared; the value was accepted as given"})
            s.update(status="done", error=None, finished_at=at, edited={"by": who, "at": at})
            s.pop("result", None)
            after_it = d["plan"][index + 1 :]
            reset = {x["id"] for x in after_it if x["status"] in RERUN_ON_EDIT} if later == "rerun" else set()
            for x in after_it:
                if x["id"] in reset:
                    x.update(status="pending", result_ref=None, error=None, finished_at=None)
            d["artifacts"] = [a for a in d["artifacts"] if not (a.get("step_id") and a["step_id"] in reset)]
            d["recovery"]["pending_approval"] = None
            nxt = next((x for x in after_it if x["status"] not in ("done", "skipped")), None)
            d["status"] = "waiting_human" if nxt else "done"
            if not nxt:
                d["phase"] = DONE_PHASE
            elif phase is not None:
                d["phase"] = phase
            dropped = " (the pending resume plan was dropped: it no longer applies)" if had_pending else ""
            d["resume_hint"] = f"{s['id']} was set by {who}; resume continues at {nxt['id']} ({nxt['name']}): {hint(d, 'resume')}{dropped}" if nxt else f"{s['id']} was set by {who}; every step is finished"

        engine.save(apply, results={s0["id"]: to_plain(value)}, source={"kind": "human-edit", "actor": who, "edit": {"step_id": s0["id"], "before": before, "after": to_plain(value)}})
        engine.event("runner", None, {"status": "edited", "step_id": s0["id"], "by": who})
        after = engine.working
        return engine.outcome(after["status"], f"step {s0['id']} of {task_id} now has the edited result (version {after['version']})", None if after["status"] == "done" else f"continue: {next_step(after, 'resume')}")

    return _with_engine(root, task_id, "edit", edit)

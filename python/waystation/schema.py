"""Validation of checkpoints against docs/checkpoint.schema.json, with the standard library only.

The schema is bundled (`checkpoint.schema.json`, a copy a test keeps equal to
docs/checkpoint.schema.json) and evaluated by a small validator for the
keywords it uses. Defaults are filled as the TypeScript side's zod schema
fills them, and the invariants of shared/checkpoint/invariants.ts that a
writer can break are checked too, so a checkpoint this library writes is one
Waystation accepts.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from importlib import resources
from typing import Any, Optional

from .errors import SchemaError

CURRENT_SCHEMA_VERSION = 3
_schema: Optional[dict[str, Any]] = None


def checkpoint_schema() -> dict[str, Any]:
    """The JSON Schema of a checkpoint (draft 2020-12), as published in docs/."""
    global _schema
    if _schema is None:
        text = resources.files(__package__).joinpath("checkpoint.schema.json").read_text("utf-8")
        _schema = json.loads(text)
    return _schema


def _type_ok(value: Any, t: str) -> bool:
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if t == "integer":
        return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
    if t == "number":
        return not isinstance(value, bool) and isinstance(value, (int, float))
    return True


def _at(path: str) -> str:
    return path or "(the checkpoint)"


def validate(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Problems of `value` against `schema` (the keywords checkpoint.schema.json uses), each naming its path."""
    problems: list[str] = []
    if schema is True or schema == {}:
        return problems
    if "anyOf" in schema:
        if not any(not validate(value, s, path) for s in schema["anyOf"]):
            options = [validate(value, s, path) for s in schema["anyOf"]]
            best = min(options, key=len)
            problems.extend(best or [f"{_at(path)}: matches none of the allowed forms"])
            return problems
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_type_ok(value, x) for x in types):
            return [f"{_at(path)}: expected {' or '.join(types)}, got {type(value).__name__} {json.dumps(value)[:60]}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{_at(path)}: expected {json.dumps(schema['const'])}, got {json.dumps(value)[:60]}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{_at(path)}: expected one of {', '.join(map(json.dumps, schema['enum']))}, got {json.dumps(value)[:60]}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{_at(path)}: must not be empty" if schema["minLength"] == 1 else f"{_at(path)}: too short")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            problems.append(f"{_at(path)}: {json.dumps(value)[:80]} does not match {schema['pattern']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{_at(path)}: must be at least {schema['minimum']}, got {value}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            problems.append(f"{_at(path)}: must be more than {schema['exclusiveMinimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{_at(path)}: must be at most {schema['maximum']}, got {value}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problems.extend(validate(item, schema["items"], f"{path}[{i}]"))
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path + '.' if path else ''}{key}: is required")
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key in value:
                problems.extend(validate(value[key], sub, f"{path}.{key}" if path else key))
        extra = schema.get("additionalProperties")
        names = schema.get("propertyNames")
        for key, item in value.items():
            if names is not None:
                problems.extend(validate(key, names, f"{path}.{key} (name)"))
            if key not in props and isinstance(extra, dict):
                problems.extend(validate(item, extra, f"{path}.{key}" if path else key))
    return problems


# ---- defaults, as the zod schema fills them ---------------------------------------------------


def fill_defaults(cp: dict[str, Any]) -> dict[str, Any]:
    """Fill, in place, the fields a checkpoint may leave out (the zod schema's defaults), and return it."""
    for key, default in (("artifacts", []), ("side_effects", []), ("resume_hint", ""), ("errors", [])):
        cp.setdefault(key, default)
    cp.setdefault("history", {"count": 0, "head": None})
    for step in cp.get("plan", []) if isinstance(cp.get("plan"), list) else []:
        if isinstance(step, dict):
            step.setdefault("attempts", 0)
    for a in cp["artifacts"] if isinstance(cp["artifacts"], list) else []:
        if isinstance(a, dict):
            a.setdefault("status", "written")
    for e in cp["side_effects"] if isinstance(cp["side_effects"], list) else []:
        if isinstance(e, dict):
            e.setdefault("attempts", 0)
    rec = cp.get("recovery")
    if isinstance(rec, dict):
        rec.setdefault("decisions", [])
        rec.setdefault("auto_attempts", 0)
        pending = rec.get("pending_approval")
        if isinstance(pending, dict) and isinstance(pending.get("plan"), dict):
            for key in ("probe_effects", "retry_effects", "drift"):
                pending["plan"].setdefault(key, [])
    run = cp.get("run")
    if isinstance(run, dict):
        for key in ("tokens_in", "tokens_out", "cost_usd", "elapsed_ms"):
            run.setdefault(key, 0)
        run.setdefault("llm_calls", [])
        for call in run["llm_calls"] if isinstance(run["llm_calls"], list) else []:
            if isinstance(call, dict):
                call.setdefault("retries", 0)
                call.setdefault("retry_reasons", [])
    agent = cp.get("agent")
    if isinstance(agent, dict):
        agent.setdefault("options", {})
    return cp


# ---- invariants (shared/checkpoint/invariants.ts) ---------------------------------------------

_FINISHED = ("done", "skipped")


def expected_current_step(plan: list[dict[str, Any]]) -> int:
    """The number of leading plan steps that are done or skipped: where a resume starts."""
    i = 0
    while i < len(plan) and plan[i].get("status") in _FINISHED:
        i += 1
    return i


def _ts(value: Any) -> Optional[float]:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def invariant_problems(cp: dict[str, Any]) -> list[str]:
    """The ways a checkpoint that fits the schema contradicts itself."""
    out: list[str] = []
    plan = cp.get("plan", [])
    effects = cp.get("side_effects", [])
    if cp.get("total_steps") != len(plan):
        out.append(f"total_steps is {cp.get('total_steps')} but the plan has {len(plan)} steps")
    if cp.get("current_step") != expected_current_step(plan):
        out.append(f"current_step is {cp.get('current_step')} but {expected_current_step(plan)} leading plan steps are done or skipped")

    def dup(values: list[Any]) -> set[Any]:
        seen: set[Any] = set()
        return {v for v in values if v in seen or seen.add(v)}  # type: ignore[func-returns-value]

    for i in dup([s["id"] for s in plan]):
        out.append(f'plan step id "{i}" is used more than once')
    for i in dup([e["id"] for e in effects]):
        out.append(f'side effect id "{i}" is used more than once')
    for k in dup([e["idempotency_key"] for e in effects]):
        out.append(f'idempotency key "{k}" is used by more than one side effect')
    ids = {s["id"] for s in plan}
    for a in cp.get("artifacts", []):
        if "step_id" in a and a["step_id"] not in ids:
            out.append(f'artifact {a["path"]} names step "{a["step_id"]}", which is not in the plan')
    for e in effects:
        if "step_id" in e and e["step_id"] not in ids:
            out.append(f'side effect {e["id"]} names step "{e["step_id"]}", which is not in the plan')
    for err in cp.get("errors", []):
        if err.get("step_id") is not None and err["step_id"] not in ids:
            out.append(f'recorded error "{err["what"]}" names step "{err["step_id"]}", which is not in the plan')
    pending = (cp.get("recovery") or {}).get("pending_approval")
    status = cp.get("status")
    if status == "done" and any(s["status"] not in _FINISHED for s in plan):
        out.append("status is done but some plan steps are not done or skipped")
    if status == "waiting_approval" and not pending:
        out.append("status is waiting_approval but recovery.pending_approval is empty")
    if status == "failed" and not any(s["status"] == "failed" for s in plan) and not cp.get("errors"):
        out.append("status is failed but no plan step failed and no error is recorded")
    if pending and status != "waiting_approval":
        out.append(f"recovery.pending_approval is set but status is {status}, not waiting_approval")
    if pending:
        eids = {e["id"] for e in effects}
        rp = pending.get("plan", {})
        if rp.get("rerun_step") is not None and rp["rerun_step"] not in ids:
            out.append(f'the pending resume plan reruns step "{rp["rerun_step"]}", which is not in the plan')
        for i in list(rp.get("probe_effects", [])) + list(rp.get("retry_effects", [])):
            if i not in eids:
                out.append(f'the pending resume plan names side effect "{i}", which is not recorded')
    run = cp.get("run", {})
    created, updated = _ts(run.get("created_at")), _ts(run.get("updated_at"))
    if created is None:
        out.append(f"run.created_at {run.get('created_at')!r} is not a timestamp")
    if updated is None:
        out.append(f"run.updated_at {run.get('updated_at')!r} is not a timestamp")
    if created is not None and updated is not None and updated < created:
        out.append("run.updated_at is before run.created_at")
    for s in plan:
        a, b = s.get("started_at"), s.get("finished_at")
        ta, tb = _ts(a), _ts(b)
        if a is not None and ta is None:
            out.append(f"step {s['id']}: started_at {a!r} is not a timestamp")
        if b is not None and tb is None:
            out.append(f"step {s['id']}: finished_at {b!r} is not a timestamp")
        if ta is not None and tb is not None and tb < ta:
            out.append(f"step {s['id']} finished before it started")
    h = cp.get("history", {})
    if h.get("count", 0) > 0 and h.get("head") is None:
        out.append("history.count is positive but history.head is null")
    if h.get("count", 0) == 0 and h.get("head") is not None:
        out.append("history.head points at a chunk but history.count is 0")
    return out


def check_checkpoint(cp: dict[str, Any], what: str = "checkpoint") -> None:
    """Raise SchemaError when `cp` does not fit the schema or contradicts itself."""
    problems = validate(cp, checkpoint_schema())
    if not problems:
        problems = invariant_problems(cp)
    if problems:
        raise SchemaError(f"refusing to save {what}: {'; '.join(problems[:8])}; nothing was written", problems)

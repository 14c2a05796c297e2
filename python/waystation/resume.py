"""The decision half of resuming (electron/runtime/resume-plan.ts): which step runs next, which
effects are probed or retried, what drifted, and what needs a human first. Pure functions of the
checkpoint (the words that tell a person how to answer name the program under way), so the plan a
human approves in confirm mode is computed by the same code that later runs it."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .continuation import settle_words
from .schema import invariant_problems

_FINISHED = ("done", "skipped")


def artifact_base_dir(root: str, cp: dict[str, Any]) -> str:
    """Where artifact paths are relative to: `agent.project_root` (against the root), else the root."""
    project_root = (cp.get("agent") or {}).get("project_root")
    return os.path.abspath(os.path.join(root, project_root)) if project_root else os.path.abspath(root)


def check_artifacts(root: str, cp: dict[str, Any]) -> list[dict[str, Any]]:
    """Each recorded artifact against the disk: `ok`, `missing`, `size-mismatch` or `hash-mismatch`."""
    base = artifact_base_dir(root, cp)
    out = []
    for a in cp.get("artifacts", []):
        if a.get("status") == "deleted":
            continue
        p = a["path"] if os.path.isabs(a["path"]) else os.path.join(base, a["path"])
        try:
            with open(p, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            out.append({"path": a["path"], "status": "missing", "message": "the file is gone"})
            continue
        except OSError as err:
            out.append({"path": a["path"], "status": "missing", "message": f"cannot be read ({err.strerror})"})
            continue
        if len(data) != a.get("size"):
            out.append({"path": a["path"], "status": "size-mismatch", "message": f"{len(data)} bytes, {a.get('size')} recorded"})
        elif hashlib.sha256(data).hexdigest() != a.get("sha256"):
            out.append({"path": a["path"], "status": "hash-mismatch", "message": "the content changed since it was recorded"})
        else:
            out.append({"path": a["path"], "status": "ok", "message": "unchanged"})
    return out


@dataclass
class ResumeDecision:
    """A resume plan, what blocks it, and the step index from which steps are reset (drift reruns)."""

    plan: dict[str, Any]
    blocking: list[str] = field(default_factory=list)
    reset_from: Optional[int] = None


def next_step_index(cp: dict[str, Any]) -> int:
    """The first plan step not done or skipped, or -1."""
    return next((i for i, s in enumerate(cp["plan"]) if s["status"] not in _FINISHED), -1)


def decide_resume(cp: dict[str, Any], artifacts: list[dict[str, Any]], can_probe: Callable[[dict[str, Any]], bool], rerun_drifted: bool, module_changed: bool = False) -> ResumeDecision:
    """Decide how a task resumes (see resume-plan.ts for the rules, which this follows exactly).

    An effect with no probe blocks it, with the words the program under way takes a person's answer in
    (continuation.settle_words: the resume flags, or the arguments of `waystation.task` for a script).
    """
    blocking: list[str] = []
    drifted = [a for a in artifacts if a["status"] != "ok"]
    drift = [f"{a['path']}: {a['status']} ({a['message']})" for a in drifted]
    index = {s["id"]: i for i, s in enumerate(cp["plan"])}
    nxt = next_step_index(cp)
    reset_from = None
    if drifted:
        producers = []
        for a in drifted:
            rec = next((r for r in cp["artifacts"] if r["path"] == a["path"]), None)
            producers.append(index.get(rec["step_id"]) if rec and "step_id" in rec else None)
        if any(p is None for p in producers):
            paths = ", ".join(a["path"] for a, p in zip(drifted, producers) if p is None)
            blocking.append(f"drift on an artifact no step produced ({paths}): restore the file(s), then resume")
        elif not rerun_drifted:
            blocking.append(
                f"artifacts changed since they were recorded: {'; '.join(drift)}. Restore them and resume, or resume with --rerun-drifted to regenerate them"
            )
        else:
            reset_from = min(p for p in producers if p is not None)
            nxt = reset_from if nxt == -1 else min(nxt, reset_from)
    probe_effects: list[str] = []
    retry_effects: list[str] = []
    redo_effects: list[str] = []
    # A repeat a person chose when rewinding (docs/RUNTIME.md, "Time travel"): the entry another one is superseded by.
    repeats = {e["superseded_by"] for e in cp["side_effects"] if e.get("superseded_by")}
    for e in cp["side_effects"]:
        if e.get("superseded_by"):
            continue
        if e["id"] in repeats and e["status"] == "not_started" and int(e.get("attempts", 0) or 0) == 0:
            redo_effects.append(e["id"])
        elif e["status"] in ("intent", "uncertain"):
            if e.get("has_probe") is False and not can_probe(e):
                blocking.append(
                    f"side effect {e['id']} ({e['type']}, key {e['idempotency_key']}) may or may not have happened and has no probe: "
                    f"{settle_words(e['idempotency_key'])}"
                )
            else:
                probe_effects.append(e["id"])
        elif e["status"] == "failed" or (e["status"] == "not_started" and e.get("attempts", 0) > 0):
            retry_effects.append(e["id"])
    for p in invariant_problems(cp):
        blocking.append(f"the checkpoint contradicts itself: {p}")
    plan: dict[str, Any] = {
        "rerun_step": None if nxt == -1 else cp["plan"][nxt]["id"],
        "probe_effects": probe_effects,
        "retry_effects": retry_effects,
        "drift": drift,
    }
    if module_changed:
        plan["module_changed"] = True
    if redo_effects:
        plan["redo_effects"] = redo_effects
    return ResumeDecision(plan, blocking, reset_from)


def same_plan(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two resume plans would do the same thing."""
    return (
        a.get("rerun_step") == b.get("rerun_step")
        and list(a.get("probe_effects", [])) == list(b.get("probe_effects", []))
        and list(a.get("retry_effects", [])) == list(b.get("retry_effects", []))
        and list(a.get("drift", [])) == list(b.get("drift", []))
        and list(a.get("redo_effects", [])) == list(b.get("redo_effects", []))
        and bool(a.get("module_changed")) == bool(b.get("module_changed"))
    )


def describe_plan(plan: dict[str, Any], cp: dict[str, Any]) -> list[str]:
    """A resume plan in a few lines."""

    def name(i: Optional[str]) -> str:
        if not i:
            return "nothing: every step is finished"
        s = next((x for x in cp["plan"] if x["id"] == i), None)
        return f"{i} ({s['name'] if s else '?'})"

    def effect(i: str) -> str:
        e = next((x for x in cp["side_effects"] if x["id"] == i), None)
        return f"{i} {e['type']} key {e['idempotency_key']}" if e else i

    lines = [f"rerun from: {name(plan.get('rerun_step'))}"]
    if plan.get("probe_effects"):
        lines.append(f"probe, then mark done or retry with the same key: {', '.join(map(effect, plan['probe_effects']))}")
    if plan.get("retry_effects"):
        lines.append(f"retry with the same key: {', '.join(map(effect, plan['retry_effects']))}")
    if plan.get("redo_effects"):
        lines.append(f"perform again, under a new key (a person chose it): {', '.join(map(effect, plan['redo_effects']))}")
    if plan.get("drift"):
        lines.append(f"drifted (the steps that made them rerun): {'; '.join(plan['drift'])}")
    if plan.get("module_changed"):
        ref = cp.get("agent") or {}
        lines.append(
            f"the agent module changed since the task recorded it ({ref['module']}): the remaining steps run with the new code"
            if ref.get("module")
            else f"the files of the agent's command changed since the task recorded them ({' '.join(ref.get('command') or ['command'])}): the remaining steps run with the new code"
        )
    return lines


@dataclass
class ResumeContext:
    """The minimal context a resumed run starts from: goal, decisions so far, artifacts, next step, hint."""

    goal: str
    decisions: list[str]
    artifacts: list[dict[str, Any]]
    next_step: Optional[dict[str, str]]
    resume_hint: str


def build_resume_context(cp: dict[str, Any]) -> ResumeContext:
    """Rebuild the minimal context (the fifth step of resuming)."""
    decisions = []
    for s in cp["plan"]:
        if s["status"] == "done":
            edited = s.get("edited")
            decisions.append(
                f"{s['id']} ({s['name']}): result set by a human edit{' (' + edited['by'] + ')' if edited and edited.get('by') else ''}" if edited else f"{s['id']} ({s['name']}): done"
            )
        elif s["status"] == "skipped":
            decisions.append(f"{s['id']} ({s['name']}): skipped")
    for e in cp["errors"]:
        if e.get("fix"):
            decisions.append(f'recovered from "{e["what"]}": {e["fix"]}' + (f" (verified: {e['verification']})" if e.get("verification") else ""))
    for d in cp["recovery"]["decisions"]:
        decisions.append(f"resume plan {d['approval_id']} {d['decision']} by {d['by']} at {d['at']}" + (f": {d['reason']}" if d.get("reason") else ""))
    for e in cp["side_effects"]:
        if e["status"] == "done":
            decisions.append(f"side effect {e['type']} (key {e['idempotency_key']}) is done")
    i = next_step_index(cp)
    return ResumeContext(
        goal=cp["goal"],
        decisions=decisions,
        artifacts=list(cp["artifacts"]),
        next_step=None if i == -1 else {"id": cp["plan"][i]["id"], "name": cp["plan"][i]["name"]},
        resume_hint=cp["resume_hint"],
    )

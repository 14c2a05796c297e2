"""Tasks the TypeScript runtime rewound or forked, resumed here with the ledger rule (docs/RUNTIME.md,
"Time travel"): a kept effect is not repeated and its key still held; a repeat a person chose runs once
under its new key; a fork's carried effects answer for the keys its agent asks with. The rewinds and forks
are written here exactly as electron/runtime/rewind-task.ts and fork-task.ts write them."""

from __future__ import annotations

import copy

import pytest

from waystation import Agent, PlannedStep, Store, run_agent
from waystation.lease import acquire_lease
from waystation.phase import rerun_phase
from waystation.resume import decide_resume, describe_plan, same_plan


def publishing_agent(published, prompts=None):
    def run(t):
        t.step("draft", lambda: t.complete([{"role": "user", "content": f"draft {t.task_id}"}]).text if prompts is not None else "text")

        def publish():
            def perform(key):
                published.append(key)
                return {"n": len(published)}

            return t.effect("http-publish", key=f"{t.task_id}:publish", perform=perform)

        t.step("publish", publish)

    return Agent(name="publisher", run=run, plan=[PlannedStep("draft", "draft"), PlannedStep("publish", "publish")], goal="publish once")


def write_as_typescript(root, task_id, mutate, source):
    """Save the next version the way a TypeScript operation does: under the task's lease, after the newest version."""
    store = Store(root)
    lease = acquire_lease(store.task_dir(task_id), task_id, owner="typescript", heartbeat_ms=0)
    try:
        cp = store.load(task_id)
        d = copy.deepcopy(cp)
        mutate(d)
        d["source"] = source
        d.pop("version")
        return store.save(task_id, cp["version"], d, lease=lease)
    finally:
        store.settle(task_id)
        lease.release()


def rewind(root, task_id, step_id, redo=()):
    """rewind-task.ts: the step and every later one pending (reruns + 1); each redo a new entry under a new key; the
    task waits for a person in the phase the step ran in."""
    store = Store(root)
    cp = store.load(task_id)
    index = next(i for i, s in enumerate(cp["plan"]) if s["id"] == step_id)
    phase = rerun_phase(store, cp, index)

    def apply(d):
        for s in d["plan"][index:]:
            if s["status"] != "pending":
                s.update(status="pending", result_ref=None, error=None, started_at=None, finished_at=None, reruns=s.get("reruns", 0) + 1)
                s.pop("result", None)
        for eid in redo:
            old = next(e for e in d["side_effects"] if e["id"] == eid)
            asked = old.get("asked_key") or old["idempotency_key"]
            repeat = {"id": f"effect-{len(d['side_effects']) + 1}", "type": old["type"], "status": "not_started", "idempotency_key": f"{asked}-redo2", "asked_key": asked, "step_id": old["step_id"], "attempts": 0}
            old["superseded_by"] = repeat["id"]
            d["side_effects"].append(repeat)
        d["recovery"]["pending_approval"] = None
        d["recovery"]["stopped"] = None
        d["status"] = "waiting_human"
        d["phase"] = phase
        d["resume_hint"] = f"rewound to {step_id}"
        d["total_steps"] = len(d["plan"])
        d["current_step"] = next((i for i, s in enumerate(d["plan"]) if s["status"] not in ("done", "skipped")), len(d["plan"]))

    return write_as_typescript(root, task_id, apply, {"kind": "rewind", "actor": "ada", "rewind": {"step_id": step_id, "redo": list(redo)}})


def test_a_kept_effect_is_not_repeated_after_a_rewind(root, model):
    published: list = []
    agent = publishing_agent(published)
    assert run_agent(agent, root, "t", model=model).status == "done"
    rewind(root, "t", "draft")
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "done"
    assert published == ["t:publish"]  # the key is still held: not performed again
    cp = Store(root).load("t")
    assert [(s["attempts"], s["reruns"]) for s in cp["plan"]] == [(2, 1), (2, 1)]
    assert len(cp["side_effects"]) == 1


def test_a_redo_runs_once_under_its_new_key_and_the_old_entry_stays(root, model):
    published: list = []
    agent = publishing_agent(published)
    run_agent(agent, root, "t", model=model)
    rewind(root, "t", "publish", redo=["effect-1"])
    plan = decide_resume(Store(root).load("t"), [], lambda e: False, False).plan
    assert plan["redo_effects"] == ["effect-2"] and plan["rerun_step"] == "publish"
    assert "perform again, under a new key (a person chose it): effect-2 http-publish key t:publish-redo2" in describe_plan(plan, Store(root).load("t"))
    assert run_agent(agent, root, "t", model=model).status == "done"
    assert published == ["t:publish", "t:publish-redo2"]
    cp = Store(root).load("t")
    old, repeat = cp["side_effects"]
    assert old["status"] == "done" and old["idempotency_key"] == "t:publish" and old["superseded_by"] == "effect-2"
    assert repeat["status"] == "done" and repeat["attempts"] == 1 and repeat["asked_key"] == "t:publish"
    # Once done, the repeat is what answers for the key: another rewind keeps it.
    rewind(root, "t", "publish")
    assert "redo_effects" not in decide_resume(Store(root).load("t"), [], lambda e: False, False).plan
    assert run_agent(agent, root, "t", model=model).status == "done"
    assert published == ["t:publish", "t:publish-redo2"]


def test_a_rerun_step_calls_the_model_again_instead_of_replaying_its_reply(root, model):
    published: list = []
    agent = publishing_agent(published, prompts=[])
    run_agent(agent, root, "t", model=model)
    calls_before = len(Store(root).load("t")["run"]["llm_calls"])
    rewind(root, "t", "draft")
    run_agent(agent, root, "t", model=model)
    cp = Store(root).load("t")
    # The rerun is a new attempt: its model call is made and recorded, not taken from the first run's history.
    assert len(cp["run"]["llm_calls"]) == calls_before + 1
    keys = [m["call_key"] for m in Store(root).read_history("t", cp) if m.get("role") == "assistant"]
    assert keys[0].startswith("draft#0#0:") and keys[1].startswith("draft#0r1#0:")


def test_a_fork_does_not_repeat_what_its_parent_published(root, model):
    published: list = []
    agent = publishing_agent(published)
    run_agent(agent, root, "parent", model=model)
    store = Store(root)
    # fork-task.ts: the parent's state at a version where the publication was done and its step not yet.
    at = next(v for v in store.versions("parent") if (lambda c: c["side_effects"] and c["side_effects"][0]["status"] == "done" and c["plan"][1]["status"] != "done")(store.load("parent", v)))
    state = store.load("parent", at)
    state.pop("version")
    origin = {"task_id": "parent", "version": at}
    for e in state["side_effects"]:
        e["asked_key"] = e["idempotency_key"].replace("parent", "fork")
    for s in state["plan"]:
        if s.get("result_ref"):
            s.pop("result_ref")
            s["status"] = "pending"
    state.update(task_id="fork", forked_from=origin, source={"kind": "fork", "actor": "ada", "forked_from": origin}, history={"count": 0, "head": None}, current_step=0)
    # A fork carries no stop: not its parent's, nor one of its own (fork-task.ts).
    state["recovery"]["stopped"] = None
    store.create(state)
    parent_version = store.newest_version("parent")

    out = run_agent(agent, root, "fork", model=model)
    assert out.status == "done"
    assert published == ["parent:publish"]
    cp = store.load("fork")
    assert cp["forked_from"] == origin and cp["recovery"]["stopped"] is None
    assert [e["idempotency_key"] for e in cp["side_effects"]] == ["parent:publish"]
    assert store.newest_version("parent") == parent_version


def test_plans_with_different_redo_effects_are_not_the_same_plan():
    base = {"rerun_step": "a", "probe_effects": [], "retry_effects": [], "drift": []}
    assert same_plan(base, dict(base))
    assert not same_plan(base, {**base, "redo_effects": ["effect-2"]})


@pytest.mark.parametrize("one_instant", [False, True])
def test_a_done_task_an_edit_sets_back_stands_in_the_phase_its_first_rerun_step_ran_in(root, model, monkeypatch, one_instant):
    from waystation import edit_step_result
    import waystation.runtime

    if one_instant:
        # Every save in one millisecond, as a fast agent's are: the phase is found by what the versions hold.
        monkeypatch.setattr(waystation.runtime, "now_iso", lambda: "2026-01-01T00:00:00.000Z")

    def run(t):
        t.phase("drafting")
        t.step("draft", lambda: "text")
        t.phase("publishing")
        t.step("publish", lambda: "sent")

    agent = Agent(name="phased", run=run, plan=[PlannedStep("draft", "draft"), PlannedStep("publish", "publish")], goal="two phases")
    run_agent(agent, root, "t", model=model)
    assert Store(root).load("t")["phase"] == "done"
    assert edit_step_result(root, "t", "draft", "by hand", actor="ada").status == "waiting_human"
    cp = Store(root).load("t")
    assert (cp["status"], cp["phase"]) == ("waiting_human", "publishing")
    assert run_agent(agent, root, "t", model=model).status == "done"
    assert Store(root).load("t")["phase"] == "done"


def test_editing_a_done_step_reruns_the_later_ones_or_keeps_them(root, model):
    from waystation import OperationError, edit_step_result

    published: list = []
    agent = publishing_agent(published)
    run_agent(agent, root, "t", model=model)
    out = edit_step_result(root, "t", "draft", "by hand", actor="ada", later="keep")
    assert out.status == "done"
    cp = Store(root).load("t")
    assert [s["status"] for s in cp["plan"]] == ["done", "done"] and cp["plan"][0]["edited"]["by"] == "ada"
    out = edit_step_result(root, "t", "draft", "by hand again", actor="ada")
    assert out.status == "waiting_human"
    assert [s["status"] for s in Store(root).load("t")["plan"]] == ["done", "pending"]
    # The rerun of the later step finds its effect done: the publication is kept.
    assert run_agent(agent, root, "t", model=model).status == "done"
    assert published == ["t:publish"]
    assert Store(root).read_blob("t", Store(root).load("t")["plan"][0]["result_ref"]) == "by hand again"
    with pytest.raises(OperationError, match='"rerun" or "keep"'):
        edit_step_result(root, "t", "draft", "x", later="sometimes")

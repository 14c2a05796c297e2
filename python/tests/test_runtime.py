"""The runtime: steps once, effects at most once, humans, the three recovery modes, the resume, and every refusal."""

from __future__ import annotations

import os
import shutil

import pytest

import waystation
from waystation import Agent, OperationError, PlannedStep, StepFailed, Store, TaskNotRunnable, edit_step_result, reject_task, run_agent


class Calls:
    def __init__(self):
        self.n: dict[str, int] = {}

    def hit(self, key):
        self.n[key] = self.n.get(key, 0) + 1
        return self.n[key]


def two_step_agent(calls, fail=lambda: False, **kw):
    def run(t):
        a = t.step("a", lambda: calls.hit("a") and {"value": 1})
        def b():
            calls.hit("b")
            if fail():
                raise RuntimeError("b broke")
            return a["value"] + 1
        t.step("b", b)

    return Agent(name="two", run=run, plan=[PlannedStep("a", "first"), PlannedStep("b", "second")], goal="two steps", **kw)


def test_a_done_step_is_never_run_again(root, model):
    calls = Calls()
    broken = {"on": True}
    agent = two_step_agent(calls, fail=lambda: broken["on"])
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "failed" and out.exit_code == 1 and "b broke" in out.message
    broken["on"] = False
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "done" and calls.n == {"a": 1, "b": 2}
    cp = Store(root).load("t")
    assert [s["status"] for s in cp["plan"]] == ["done", "done"]
    assert cp["plan"][1]["attempts"] == 2 and cp["plan"][1]["failures"] == 1
    assert any("reran the step" in (e.get("fix") or "") for e in cp["errors"])  # the fifth save boundary
    assert Store(root).read_blob("t", cp["plan"][1]["result_ref"]) == 2
    # Resuming a done task does nothing.
    assert run_agent(agent, root, "t", model=model).message.endswith("nothing to resume")


def test_the_task_context_manager_creates_resumes_and_finishes(root, model):
    calls = Calls()
    with pytest.raises(StepFailed, match="boom"):
        with waystation.task(root, "cm", agent="cm-agent", plan=[("fetch", "fetch it"), ("use", "use it")], model=model) as t:
            t.step("fetch", lambda: calls.hit("fetch") and "page")

            @t.step("use")
            def used():
                raise ValueError("boom")

    assert Store(root).load("cm")["status"] == "failed"
    with waystation.task(root, "cm", agent="cm-agent", model=model) as t:
        page = t.step("fetch", lambda: calls.hit("fetch") and "other")

        @t.step("use")
        def used():
            return page.upper()

        assert t.resumed is not None and t.resumed.next_step == {"id": "use", "name": "use it"}
    assert used == "PAGE" and calls.n["fetch"] == 1
    assert Store(root).load("cm")["status"] == "done"
    with pytest.raises(TaskNotRunnable, match="already done"):
        with waystation.task(root, "cm", agent="cm-agent", model=model):
            pass


def test_model_calls_record_tokens_cost_and_timings_and_are_reused_after_an_interruption(root, model, monkeypatch):
    monkeypatch.setenv("WAYSTATION_PRICE_PER_MTOK", "1,2")
    seen = []

    class Counting(waystation.OfflineModel):
        def complete(self, messages, **opts):
            seen.append(messages)
            return super().complete(messages, **opts)

    counting = Counting(latency_ms=0)
    crash = {"on": True}

    def run(t):
        def s():
            reply = t.complete([{"role": "user", "content": "hello"}])
            if crash["on"]:
                raise KeyboardInterrupt  # the process dies after the call was saved
            return reply.text

        t.step("s", s)

    agent = Agent(name="llm", run=run, plan=[PlannedStep("s", "ask")])
    with pytest.raises(KeyboardInterrupt):
        run_agent(agent, root, "t", model=counting)
    cp = Store(root).load("t")
    call = cp["run"]["llm_calls"][0]
    assert call["model"] == "waystation-offline" and call["tokens_in"] > 0 and call["tokens_out"] > 0 and "latency_ms" in call
    assert cp["run"]["cost_usd"] == pytest.approx((call["tokens_in"] * 1 + call["tokens_out"] * 2) / 1e6)
    assert cp["plan"][0]["tokens_in"] == call["tokens_in"] and cp["history"]["count"] == 2
    crash["on"] = False
    assert run_agent(agent, root, "t", model=counting).status == "done"
    assert len(seen) == 1  # the interrupted step reused the saved reply


def test_an_effect_is_recorded_before_and_after_and_never_repeated(root, model):
    performed = []
    agent_calls = Calls()

    def run(t):
        t.step("send", lambda: t.effect("email", "t:send", lambda key: performed.append(key) or {"sent": key}, request={"to": "x"}))
        if agent_calls.hit("run") == 1:
            raise RuntimeError("after the effect")

    agent = Agent(name="fx", run=run, plan=[PlannedStep("send", "send it")])
    assert run_agent(agent, root, "t", model=model).status == "failed"
    assert run_agent(agent, root, "t", model=model).status == "done"
    assert performed == ["t:send"]
    cp = Store(root).load("t")
    e = cp["side_effects"][0]
    assert e["status"] == "done" and e["outcome"] == {"sent": "t:send"} and e["request"] == {"to": "x"} and e["attempts"] == 1
    statuses = [Store(root).load("t", v)["side_effects"][0]["status"] for v in range(1, cp["version"] + 1) if Store(root).load("t", v)["side_effects"]]
    assert statuses[:2] == ["intent", "done"]


def test_an_uncertain_effect_is_probed_on_resume(root, model):
    world = {"published": set(), "posts": 0}

    def perform(key):
        world["posts"] += 1
        world["published"].add(key)
        raise ConnectionError("the reply was lost")  # applied, but the caller cannot know

    def probe(effect, options):
        return {"happened": effect["idempotency_key"] in world["published"], "outcome": {"id": 7}}

    def run(t):
        t.step("pub", lambda: t.effect("http-publish", "t:pub", perform))

    agent = Agent(name="pub", run=run, plan=[PlannedStep("pub", "publish")], probes={"http-publish": probe})
    assert run_agent(agent, root, "t", model=model).status == "failed"
    assert Store(root).load("t")["side_effects"][0]["status"] == "uncertain"
    assert run_agent(agent, root, "t", model=model).status == "done"
    cp = Store(root).load("t")
    assert world["posts"] == 1 and cp["side_effects"][0]["reconciliation"] == "probed-done"
    assert Store(root).read_blob("t", cp["plan"][0]["result_ref"]) == {"id": 7}


def test_an_uncertain_effect_without_a_probe_waits_for_a_human_who_settles_it(root, model):
    tries = []

    def perform(key):
        tries.append(key)
        if len(tries) == 1:
            raise TimeoutError("no answer")
        return "ok"

    agent = Agent(name="np", run=lambda t: t.step("x", lambda: t.effect("charge", "t:charge", perform)), plan=[PlannedStep("x", "charge")])
    assert run_agent(agent, root, "t", model=model).status == "failed"
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "waiting_human" and out.exit_code == 3
    # Said in the arguments run_agent takes: its caller, not a command line, settles the effect.
    assert "`settle={'t:charge': True}` (it happened) or `settle={'t:charge': False}` (it did not) passed to `run_agent(...)`" in out.message
    out = run_agent(agent, root, "t", model=model, settle={"t:charge": False})
    assert out.status == "done" and tries == ["t:charge", "t:charge"]
    assert Store(root).load("t")["side_effects"][0]["reconciliation"] == "settled-by-human-retry"


def test_waiting_for_a_human_saves_first_and_returns_the_note_on_resume(root, model):
    notes = []

    def run(t):
        t.step("ask", lambda: notes.append(t.wait_for_human("pick a colour")) or notes[-1])

    agent = Agent(name="wait", run=run, plan=[PlannedStep("ask", "ask")])
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "waiting_human" and "pick a colour" in out.message
    assert Store(root).load("t")["human_waits"][0]["reason"] == "pick a colour"
    out = run_agent(agent, root, "t", model=model, note="blue")
    assert out.status == "done" and notes == ["blue"]


def test_confirm_mode_prepares_a_plan_that_approve_runs_and_reject_halts(root, model):
    calls = Calls()
    broken = {"on": True}
    agent = two_step_agent(calls, fail=lambda: broken["on"])
    out = run_agent(agent, root, "t", model=model, mode="confirm")
    assert out.status == "waiting_approval" and out.exit_code == 4
    pending = Store(root).load("t")["recovery"]["pending_approval"]
    assert pending["plan"]["rerun_step"] == "b"
    assert run_agent(agent, root, "t", model=model).status == "waiting_approval"  # a plain resume does not run it
    broken["on"] = False
    out = run_agent(agent, root, "t", model=model, approve=True, actor="ana")
    assert out.status == "done"
    decision = Store(root).load("t")["recovery"]["decisions"][0]
    assert decision["decision"] == "approved" and decision["by"] == "ana" and decision["approval_id"] == pending["id"]

    broken["on"] = True
    run_agent(agent, root, "u", model=model, mode="confirm")
    out = reject_task(root, "u", "not today", actor="bo")
    assert out.status == "halted" and out.exit_code == 5
    with pytest.raises(OperationError, match="halted"):
        run_agent(agent, root, "u", model=model)
    with pytest.raises(OperationError, match="needs a reason"):
        reject_task(root, "u", "  ")
    with pytest.raises(OperationError, match="no pending approval"):
        reject_task(root, "t", "late")


def test_auto_mode_resumes_failures_with_backoff_up_to_the_limit(root, model, monkeypatch):
    monkeypatch.setenv("WAYSTATION_AUTO_BACKOFF_MS", "0")
    calls = Calls()
    agent = two_step_agent(calls, fail=lambda: calls.n.get("b", 0) < 3)
    out = run_agent(agent, root, "t", model=model, mode="auto")
    assert out.status == "done" and calls.n["b"] == 3
    never = two_step_agent(Calls(), fail=lambda: True)
    out = run_agent(never, root, "u", model=model, mode="auto", max_auto_attempts=2)
    assert out.status == "failed"
    assert Store(root).load("u")["recovery"]["auto_attempts"] == 2


def test_a_human_edit_replaces_a_result_and_resets_later_steps(root, model):
    calls = Calls()
    agent = Agent(
        name="ed",
        run=lambda t: [t.step("a", lambda: "x"), t.step("b", lambda: calls.hit("b") and (_ for _ in ()).throw(RuntimeError("bad")))],
        plan=[PlannedStep("a", "a", {"type": "string"}), PlannedStep("b", "b", {"type": "string"})],
    )
    run_agent(agent, root, "t", model=model)
    with pytest.raises(OperationError, match="output schema"):
        edit_step_result(root, "t", "b", 42)
    with pytest.raises(OperationError, match="has no step"):
        edit_step_result(root, "t", "zz", "v")
    out = edit_step_result(root, "t", "b", "fixed by hand", actor="cy")
    assert out.status == "done"
    cp = Store(root).load("t")
    assert cp["source"]["kind"] == "human-edit" and cp["source"]["edit"] == {"step_id": "b", "before": None, "after": "fixed by hand"}
    with pytest.raises(OperationError, match="moved on"):
        edit_step_result(root, "t", "a", "y", expected_version=1)


def test_drift_stops_the_resume_until_restored_or_rerun(root, model):
    runs = Calls()

    def run(t):
        t.step("w", lambda: runs.hit("w") and t.write_artifact("out.txt", "hello") and "written")
        t.step("x", lambda: (_ for _ in ()).throw(RuntimeError("later failure")) if runs.n.get("w") == 1 else "ok")

    agent = Agent(name="drift", run=run, plan=[PlannedStep("w", "write"), PlannedStep("x", "next")])
    assert run_agent(agent, root, "t", model=model).status == "failed"
    art = Store(root).load("t")["artifacts"][0]
    assert art["path"] == "out.txt" and art["size"] == 5 and art["step_id"] == "w"
    open(os.path.join(root, "out.txt"), "w").write("tampered")
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "waiting_human" and "--rerun-drifted" in out.message
    out = run_agent(agent, root, "t", model=model, rerun_drifted=True)
    assert out.status == "done" and runs.n["w"] == 2
    assert open(os.path.join(root, "out.txt")).read() == "hello"


def test_a_done_task_reruns_its_drifted_artifact_only_when_asked(root, model):
    runs = Calls()

    def run(t):
        t.step("w", lambda: runs.hit("w") and t.write_artifact("out.txt", "hello") and "written")
        t.step("x", lambda: "ok")

    agent = Agent(name="drift-done", run=run, plan=[PlannedStep("w", "write"), PlannedStep("x", "next")])
    assert run_agent(agent, root, "t", model=model).status == "done"
    versions = len(Store(root).versions("t"))
    out = run_agent(agent, root, "t", model=model, rerun_drifted=True)
    assert out.status == "done" and out.message == "task t is done and none of its artifacts drifted; nothing to rerun"
    open(os.path.join(root, "out.txt"), "w").write("tampered")
    assert run_agent(agent, root, "t", model=model).message == "task t is already done; nothing to resume"
    assert len(Store(root).versions("t")) == versions and runs.n["w"] == 1
    out = run_agent(agent, root, "t", model=model, rerun_drifted=True)
    assert out.status == "done" and runs.n["w"] == 2
    assert open(os.path.join(root, "out.txt")).read() == "hello"
    # While it reran, the task was running in the phase its steps ran in (this agent names none), not done.
    resumed = Store(root).load("t", versions + 1)
    assert (resumed["status"], resumed["phase"]) == ("running", "start")


def test_remember_runs_a_costly_action_once_across_an_interruption(root, model):
    work = Calls()
    crash = {"on": True}

    def run(t):
        def s():
            v = t.remember("crawl", lambda: work.hit("crawl") and {"pages": 3})
            if crash["on"]:
                raise KeyboardInterrupt
            return v

        t.step("s", s)

    agent = Agent(name="rem", run=run, plan=[PlannedStep("s", "crawl")])
    with pytest.raises(KeyboardInterrupt):
        run_agent(agent, root, "t", model=model)
    crash["on"] = False
    assert run_agent(agent, root, "t", model=model).status == "done"
    assert work.n == {"crawl": 1}


def test_refusals_write_nothing(root, model):
    agent = two_step_agent(Calls())
    with pytest.raises(OperationError, match="cannot be a task id"):
        run_agent(agent, root, "../x", model=model)
    with pytest.raises(OperationError, match="recovery mode"):
        run_agent(agent, root, "t", model=model, mode="sometimes")
    strict = Agent(name="strict", run=lambda t: None, options={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    with pytest.raises(OperationError, match="invalid options"):
        run_agent(strict, root, "s", model=model)
    assert not os.path.exists(os.path.join(root, "s")) and not os.path.exists(os.path.join(root, "t"))
    picky = Agent(name="picky", run=lambda t: None, plan=lambda o, env: (_ for _ in ()).throw(RuntimeError("no input folder")))
    with pytest.raises(OperationError, match="could not start the task: no input folder"):
        run_agent(picky, root, "p", model=model)
    run_agent(agent, root, "t", model=model)
    other = Agent(name="other", run=lambda t: None)
    with pytest.raises(OperationError, match="belongs to agent two"):
        run_agent(other, root, "t", model=model)
    # A task that is not there is said as such by every operation on it, as the TypeScript side says it.
    for operate in (
        lambda: waystation.edit_step_result(root, "nope", "a", "x"),
        lambda: waystation.reject_task(root, "nope", "why"),
        lambda: waystation.request_stop(root, "nope"),
    ):
        with pytest.raises(OperationError) as refused:
            operate()
        assert refused.value.code == "not-found" and 'there is no task "nope"' in str(refused.value)
    assert not os.path.exists(os.path.join(root, "nope"))


def test_a_second_runner_is_refused_while_the_first_holds_the_lease(root, model):
    inner = {}

    def run(t):
        def s():
            with pytest.raises(OperationError, match="being driven by another runner") as err:
                run_agent(agent, root, "t", model=model)
            inner["code"] = err.value.code
            return 1

        t.step("s", s)

    agent = Agent(name="busy", run=run, plan=[PlannedStep("s", "s")])
    assert run_agent(agent, root, "t", model=model).status == "done"
    assert inner["code"] == "busy"


def test_steps_do_not_nest_and_remember_keys_are_unique(root, model):
    def nested(t):
        t.step("a", lambda: t.step("b", lambda: 1))

    out = run_agent(Agent(name="n", run=nested, plan=[PlannedStep("a", "a"), PlannedStep("b", "b")]), root, "n", model=model)
    assert out.status == "failed" and "steps do not nest" in out.message

    def twice(t):
        t.step("a", lambda: [t.remember("k", lambda: 1), t.remember("k", lambda: 2)])

    out = run_agent(Agent(name="r", run=twice, plan=[PlannedStep("a", "a")]), root, "r", model=model)
    assert "called twice" in out.message


def test_an_output_that_breaks_its_schema_fails_the_step(root, model):
    agent = Agent(name="o", run=lambda t: t.step("a", lambda: 3), plan=[PlannedStep("a", "a", {"type": "string"})])
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "failed" and "output schema" in out.message
    assert Store(root).load("t")["plan"][0]["error"]["kind"] == "output-schema"


def test_an_integer_past_what_json_keeps_exactly_fails_the_step_and_is_not_stored(root, model):
    agent = Agent(name="o", run=lambda t: t.step("a", lambda: {"n": 2**70 + 1}), plan=[PlannedStep("a", "a")])
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "failed" and "past the integers JSON keeps exactly" in out.message
    cp = Store(root).load("t")
    assert cp["plan"][0]["status"] == "failed" and "result" not in cp["plan"][0]


def test_an_error_outside_any_step_is_recorded(root, model):
    agent = Agent(name="o", run=lambda t: (_ for _ in ()).throw(LookupError("no config")), plan=[])
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "failed"
    assert Store(root).load("t")["errors"][-1]["what"] == "no config"


def test_secrets_never_reach_the_checkpoint(root, model, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    agent = Agent(name="sec", run=lambda t: t.step("a", lambda: "key is sk-test-secret-value"), plan=[PlannedStep("a", "a")])
    run_agent(agent, root, "t", model=model)
    cp = Store(root).load("t")
    assert Store(root).read_blob("t", cp["plan"][0]["result_ref"]) == "key is [redacted]"
    for name in os.listdir(os.path.join(root, "t", "versions")):
        assert b"sk-test-secret-value" not in open(os.path.join(root, "t", "versions", name), "rb").read()


def test_events_follow_the_run(root, model):
    run_agent(two_step_agent(Calls()), root, "t", model=model)
    types = [e["type"] for e in Store(root).read_events("t")]
    assert types[0] == "runner" and "step-start" in types and "step-finish" in types and types[-1] == "runner"
    ids = [e["id"] for e in Store(root).read_events("t")]
    assert ids == list(range(1, len(ids) + 1))


def test_a_changed_command_is_reported_put_in_the_plan_and_recorded_with_the_resume(root, model):
    calls = Calls()
    broken = {"on": True}
    agent = two_step_agent(calls, fail=lambda: broken["on"])
    ref = {"command": ["python3", "two.py"], "project_root": ".", "command_sha256": "a" * 64}
    assert run_agent(agent, root, "t", model=model, mode="confirm", agent_ref=ref).status == "waiting_approval"
    cp = Store(root).load("t")
    assert cp["agent"]["command_sha256"] == "a" * 64 and "module_changed" not in cp["recovery"]["pending_approval"]["plan"]
    broken["on"] = False
    lines = []
    changed = {**ref, "command_sha256": "b" * 64}
    # The plan approved-to-be did not name the change: a new plan that does waits for approval.
    out = run_agent(agent, root, "t", model=model, approve=True, agent_ref=changed, report=lines.append)
    assert out.status == "waiting_approval" and calls.n == {"a": 1, "b": 1}
    assert Store(root).load("t")["recovery"]["pending_approval"]["plan"]["module_changed"] is True
    assert "the files of the agent's command changed since the task recorded them (python3 two.py)" in out.message
    assert any("changed since task t recorded them" in line for line in lines)
    out = run_agent(agent, root, "t", model=model, approve=True, agent_ref=changed)
    assert out.status == "done" and calls.n == {"a": 1, "b": 2}
    cp = Store(root).load("t")
    assert cp["agent"]["command_sha256"] == "b" * 64 and cp["agent"]["previous_command_sha256"] == "a" * 64


def snapshot(folder):
    out = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(dirpath, name), "rb") as f:
                out[os.path.relpath(os.path.join(dirpath, name), folder)] = f.read()
    return out


def test_a_task_folder_deleted_and_written_anew_during_a_run_stops_it_and_is_left_as_it_was(root, model):
    written = {}

    def run(t):
        def replace():
            folder = os.path.join(root, "t")
            shutil.rmtree(folder)
            # Another task under the name; its folder may well get the deleted one's inode number back.
            run_agent(Agent(name="other", run=lambda o: o.step("x", lambda: "theirs"), plan=[PlannedStep("x", "x")]), root, "t", model=model)
            written["files"] = snapshot(folder)
            return "mine"

        t.step("a", replace)
        t.step("b", lambda: "mine too")

    out = run_agent(Agent(name="mine", run=run, plan=[PlannedStep("a", "a"), PlannedStep("b", "b")]), root, "t", model=model)
    assert out.status != "done" and "renamed or replaced during the run" in out.message
    assert snapshot(os.path.join(root, "t")) == written["files"]
    assert Store(root).load("t")["agent"]["name"] == "other"


def test_a_task_folder_deleted_during_a_run_stops_it_and_nothing_is_written_again(root, model):
    def run(t):
        t.step("a", lambda: shutil.rmtree(os.path.join(root, "t")) or "gone")
        t.step("b", lambda: "never")

    out = run_agent(Agent(name="mine", run=run, plan=[PlannedStep("a", "a"), PlannedStep("b", "b")]), root, "t", model=model)
    assert out.status != "done" and "was deleted during the run" in out.message
    assert not os.path.exists(os.path.join(root, "t"))

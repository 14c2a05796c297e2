"""Stopping a run: a person's stop request is honoured before a step starts and before an effect's intent,
the stop is saved (recovery.stopped, source stop), the lease let go, and a person's resume continues
without rerunning done steps or repeating effects. The rules of electron/runtime/task-engine.ts."""

from __future__ import annotations

import json
import os
import sys

import pytest

import waystation
from waystation import Agent, OperationError, PlannedStep, StopRequested, Store, request_stop, run_agent
from waystation.lease import acquire_lease, read_lease, read_stop_request, write_stop_request


def stoppable_agent(calls, stop_in, root, reason="wrong input"):
    """Three steps; the second publishes once. `stop_in` names the step body (or "effect") in which a person asks to stop."""

    def ask(where):
        if stop_in.get("at") == where:
            stop_in["at"] = None
            request_stop(root, "t", actor="grace", reason=reason)

    def run(t):
        def one():
            calls["one"] = calls.get("one", 0) + 1
            ask("one")
            return 1

        def two():
            calls["two"] = calls.get("two", 0) + 1
            ask("two-before-effect")

            def publish(key):
                calls.setdefault("published", []).append(key)
                return {"id": len(calls["published"])}

            return t.effect("publish", key=f"{t.task_id}:two", perform=publish)

        t.step("one", one)
        t.step("two", two)
        t.step("three", lambda: calls.__setitem__("three", calls.get("three", 0) + 1) or 3)

    return Agent(name="stoppable", run=run, plan=[PlannedStep(i, i) for i in ("one", "two", "three")], goal="be stopped")


def test_a_stop_lands_at_the_next_step_is_saved_and_lets_the_lease_go(root, model):
    calls: dict = {}
    stop_in = {"at": "one"}
    agent = stoppable_agent(calls, stop_in, root)
    out = run_agent(agent, root, "t", model=model, mode="auto")
    assert out.stopped and out.status == "running" and out.exit_code == 8
    # Run from this code, not from a command Waystation knows: `waystation resume` would refuse the task.
    again = 'run the program that wrote t again (agent "stoppable"); Waystation does not resume it'
    assert out.message == "task t stopped by grace" and out.next == f"continue: {again}"
    cp = Store(root).load("t")
    # The stop landed before step two started: the effect was never asked for.
    assert [s["status"] for s in cp["plan"]] == ["done", "pending", "pending"]
    assert cp["side_effects"] == []
    assert cp["status"] == "running"  # shown interrupted: running with no holder
    assert cp["recovery"]["stopped"] == {"by": "grace", "at": cp["recovery"]["stopped"]["at"], "reason": "wrong input"}
    assert cp["source"] == {"kind": "stop", "actor": "grace", "note": "stopped: wrong input"}
    assert cp["resume_hint"].startswith("stopped by grace at ") and cp["resume_hint"].endswith(f"; continue with {again}")
    assert read_lease(Store(root).task_dir("t"))["released"] is True
    events = [e for e in Store(root).read_events("t") if e["type"] == "runner"]
    assert events[-1]["data"] == {"status": "stopped", "by": "grace", "reason": "wrong input"}
    # Auto mode does not retry a stopped run.
    assert calls == {"one": 1}

    out = run_agent(agent, root, "t", model=model)
    assert out.status == "done" and not out.stopped and out.exit_code == 0
    cp = Store(root).load("t")
    assert cp["recovery"].get("stopped") is None  # a person's resume ends the stop
    assert [s["attempts"] for s in cp["plan"]] == [1, 1, 1]
    assert calls == {"one": 1, "two": 1, "three": 1, "published": ["t:two"]}


def test_a_stop_lands_before_an_effect_is_recorded_and_the_resume_performs_it_once(root, model):
    calls: dict = {}
    stop_in = {"at": "two-before-effect"}
    agent = stoppable_agent(calls, stop_in, root)
    out = run_agent(agent, root, "t", model=model)
    assert out.stopped and out.exit_code == 8
    cp = Store(root).load("t")
    assert cp["side_effects"] == []  # no intent was recorded, so nothing left the process
    assert [s["status"] for s in cp["plan"]] == ["done", "running", "pending"]
    assert "published" not in calls

    out = run_agent(agent, root, "t", model=model)
    assert out.status == "done"
    cp = Store(root).load("t")
    assert [s["attempts"] for s in cp["plan"]] == [1, 2, 1]
    assert calls["published"] == ["t:two"] and calls["one"] == 1
    assert [(e["idempotency_key"], e["status"]) for e in cp["side_effects"]] == [("t:two", "done")]


def test_a_stopped_with_block_saves_the_stop_and_raises(root, model):
    ran = []
    with pytest.raises(StopRequested, match="stopped by ana"):
        with waystation.task(root, "w", agent="with-agent", plan=["a", "b"], model=model) as t:
            t.step("a", lambda: ran.append("a") or 1)
            request_stop(root, "w", actor="ana")
            t.step("b", lambda: ran.append("b") or 2)
    assert ran == ["a"]
    cp = Store(root).load("w")
    assert cp["recovery"]["stopped"]["by"] == "ana" and "reason" not in cp["recovery"]["stopped"]
    assert cp["source"] == {"kind": "stop", "actor": "ana", "note": "stopped by a person"}
    with waystation.task(root, "w", agent="with-agent", plan=["a", "b"], model=model) as t:
        t.step("a", lambda: ran.append("a") or 1)
        t.step("b", lambda: ran.append("b") or 2)
    assert ran == ["a", "b"] and Store(root).load("w")["status"] == "done"


def test_a_request_for_an_earlier_run_never_stops_a_later_one(root, model):
    calls: dict = {}
    agent = stoppable_agent(calls, {}, root)
    store = Store(root)
    # A task whose first run was asked to stop after it had ended: the request names that run's lease entry.
    out = run_agent(stoppable_agent(calls, {"at": "one"}, root), root, "t", model=model)
    assert out.stopped
    assert any(n.endswith(".stop.json") for n in os.listdir(os.path.join(store.task_dir("t"), "lease")))
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "done" and not out.stopped


def test_the_cli_exits_8_when_stopped(root, model, capsys, tmp_path, monkeypatch):
    script = tmp_path / "stoppable.py"
    script.write_text("# calls waystation.main(agent, argv)\n")
    monkeypatch.setattr(sys, "argv", [str(script)])
    calls: dict = {}
    agent = stoppable_agent(calls, {"at": "one"}, root)
    code = waystation.main(agent, [root, "--task", "t"])
    assert code == 8
    printed = capsys.readouterr().out
    # Named as the task list names a stopped task (the TypeScript CLI says the same).
    assert "t: interrupted at version" in printed and "stopped by grace" in printed
    # The script, run again on the directory it was given (quoted only where a shell would need it): Waystation cannot run it.
    assert f"next: continue: {os.path.basename(sys.executable)} {script} {root} --task t" in printed


def test_a_stop_request_is_read_as_the_typescript_runtime_reads_it(tmp_path):
    lease_dir = tmp_path / "lease"
    lease_dir.mkdir()
    assert read_stop_request(str(lease_dir), 1) is None
    first = write_stop_request(str(tmp_path), 1, "grace", "too slow")
    assert first == {"by": "grace", "at": first["at"], "reason": "too slow", "count": 1}
    assert json.loads((lease_dir / "1.stop.json").read_text()) == first
    assert write_stop_request(str(tmp_path), 1, "grace")["count"] == 2
    assert read_stop_request(str(lease_dir), 2) is None  # bound to one lease entry
    # A request that cannot be read is still a request: stopping is the safe reading of it.
    (lease_dir / "3.stop.json").write_text("{not json")
    assert read_stop_request(str(lease_dir), 3) == {"by": "someone", "at": "1970-01-01T00:00:00.000Z", "count": 1}
    (lease_dir / "4.stop.json").write_text(json.dumps({"by": 7, "count": -1, "reason": "why"}))
    assert read_stop_request(str(lease_dir), 4) == {"by": "someone", "at": "1970-01-01T00:00:00.000Z", "reason": "why", "count": 1}


def test_stop_requests_are_pruned_with_their_lease_entries(tmp_path):
    task_dir = str(tmp_path / "task")
    for _ in range(12):
        lease = acquire_lease(task_dir, "task", heartbeat_ms=0)
        write_stop_request(task_dir, lease.n, "grace")
        lease.release()
    names = os.listdir(os.path.join(task_dir, "lease"))
    stops = sorted(int(n.split(".")[0]) for n in names if n.endswith(".stop.json"))
    entries = sorted(int(n.split(".")[0]) for n in names if n.endswith(".json") and not n.endswith(".stop.json"))
    assert entries[0] > 1 and 1 not in stops  # old entries were pruned, and their stop requests with them
    assert stops and stops[0] >= entries[0]  # no stop request outlives the entry it names


def test_request_stop_refuses_a_task_no_runner_drives(root, model):
    with pytest.raises(OperationError, match="no task"):
        request_stop(root, "nope")
    run_agent(stoppable_agent({}, {}, root), root, "t", model=model)
    with pytest.raises(OperationError, match="not driven by a runner now") as err:
        request_stop(root, "t")
    assert err.value.code == "invalid"
    assert not any(n.endswith(".stop.json") for n in os.listdir(os.path.join(Store(root).task_dir("t"), "lease")))

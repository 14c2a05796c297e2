"""A task Waystation cannot run is continued by the program that wrote it, and its hints say so (Waystation's
own `resume` and `approve` refuse such a task). A `with waystation.task(...)` block's hints name its script's
command line, and the block takes the ways out `run_agent` takes, so a confirm-mode failure can be approved and
an uncertain effect settled; a `waystation.main` script's name the script with the directory and the task, also
when it hands main an argv; a caller of `run_agent`, whose command Waystation cannot know, is told in words."""

from __future__ import annotations

import os
import sys

import pytest

import waystation
from waystation import Agent, PlannedStep, StepFailed, Store, TaskNotRunnable, edit_step_result, run_agent


@pytest.fixture
def script(tmp_path, monkeypatch):
    """This process as `python3 <tmp>/report.py --week '12 b'`: the command line a hint must name, quoted."""
    path = tmp_path / "report.py"
    path.write_text("# the script that runs the block\n")
    monkeypatch.setattr(sys, "argv", [str(path), "--week", "12 b"])
    return f"{os.path.basename(sys.executable)} {path} --week '12 b'"


def test_a_failed_confirm_mode_block_is_approved_by_running_the_script_with_approve(root, model, script):
    broken = {"on": True}

    def block(**kw):
        with waystation.task(root, "c", agent="reporter", plan=["a", "b"], mode="confirm", model=model, **kw) as t:
            t.step("a", lambda: 1)
            t.step("b", lambda: 1 / 0 if broken["on"] else 2)

    with pytest.raises(StepFailed):
        block()
    cp = Store(root).load("c")
    assert cp["status"] == "waiting_approval"
    assert f"run `{script}` again with `approve=True` passed to `waystation.task(...)`" in cp["resume_hint"]
    assert "waystation approve" not in cp["resume_hint"]

    # Run again without approving: refused, saying how to approve, with the directory filled in where a command names it.
    with pytest.raises(TaskNotRunnable) as err:
        block()
    assert f"approve: run `{script}` again with `approve=True`" in str(err.value)
    assert f"reject: waystation reject {root} c --reason TEXT" in str(err.value) and "<DIR>" not in str(err.value)

    broken["on"] = False
    block(approve=True, actor="ana")
    cp = Store(root).load("c")
    assert cp["status"] == "done" and cp["recovery"]["decisions"][-1]["by"] == "ana"


def test_an_uncertain_effect_without_a_probe_is_settled_through_the_block(root, model, script):
    tries = []

    def charge(key):
        tries.append(key)
        if len(tries) == 1:
            raise TimeoutError("no answer")
        return "charged"

    def block(**kw):
        with waystation.task(root, "e", plan=["pay"], model=model, **kw) as t:
            return t.step("pay", lambda: t.effect("charge", "e:charge", charge))

    with pytest.raises(StepFailed):
        block()
    with pytest.raises(TaskNotRunnable) as err:
        block()
    assert f"run `{script}` again with `settle={{'e:charge': True}}` (it happened)" in str(err.value)
    assert "--effect-happened" not in str(err.value)
    block(settle={"e:charge": True})
    cp = Store(root).load("e")
    assert cp["status"] == "done" and tries == ["e:charge"]  # settled as happened: not performed again
    assert cp["side_effects"][0]["reconciliation"] == "settled-by-human"


def test_a_failed_block_names_the_script_as_the_way_to_resume(root, model, script):
    with pytest.raises(StepFailed):
        with waystation.task(root, "f", plan=["a"], model=model) as t:
            t.step("a", lambda: 1 / 0)
    hint = Store(root).load("f")["resume_hint"]
    assert f"Fix the cause and run `{script}`" in hint and "waystation resume" not in hint
    # Editing the result is Waystation's: `waystation edit` works on any task.
    assert "`waystation edit <DIR> f a --value JSON`" in hint


def test_a_script_that_is_no_file_is_named_in_words(root, model, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["-c"])
    with pytest.raises(StepFailed):
        with waystation.task(root, "w", plan=["a"], model=model) as t:
            t.step("a", lambda: 1 / 0)
    hint = Store(root).load("w")["resume_hint"]
    assert "Fix the cause and run the program that wrote w again" in hint and "waystation resume" not in hint


def test_an_agent_waystation_runs_is_still_resumed_with_waystation(root, model, script):
    with pytest.raises(StepFailed):
        with waystation.task(root, "demo", agent="checkpoint-demo", plan=["a"], model=model) as t:
            t.step("a", lambda: 1 / 0)
    assert "`waystation resume <DIR> demo`" in Store(root).load("demo")["resume_hint"]


def failing_agent(broken):
    """Two steps; the second fails while `broken["on"]`."""
    return Agent(name="writer", plan=[PlannedStep("a", "draft"), PlannedStep("b", "publish")], goal="write",
                 run=lambda t: (t.step("a", lambda: 1), t.step("b", lambda: 1 / 0 if broken["on"] else 2)))


def words(task_id, agent="writer"):
    """How a hint says to run a program Waystation cannot name again (electron/runtime/continue-hint.ts)."""
    return f'run the program that wrote {task_id} again (agent "{agent}"); Waystation does not resume it'


def test_a_task_run_agent_drives_from_a_callers_code_is_continued_by_running_that_program_again(root, model):
    out = run_agent(failing_agent({"on": True}), root, "r", model=model)
    assert out.status == "failed" and out.next == f"fix the cause, then: {words('r')}"
    hint = Store(root).load("r")["resume_hint"]
    assert f"Fix the cause and {words('r')}" in hint and "waystation resume" not in hint
    # A human's edit from the same code says the same, as the TypeScript side's edit says of such a task.
    out = edit_step_result(root, "r", "a", 5)
    assert out.next == f"continue: {words('r')}"
    assert Store(root).load("r")["resume_hint"].endswith(f": {words('r')}")


def test_a_callers_confirm_mode_plan_is_approved_through_run_agent(root, model):
    broken = {"on": True}
    out = run_agent(failing_agent(broken), root, "c", model=model, mode="confirm")
    assert out.status == "waiting_approval"
    approve = 'run the program that wrote c again (agent "writer") with `approve=True` passed to `run_agent(...)`; Waystation does not resume it'
    assert f"approve: {approve}   reject: waystation reject <DIR> c --reason TEXT" == out.next
    assert "waystation approve" not in Store(root).load("c")["resume_hint"]
    broken["on"] = False
    assert run_agent(failing_agent(broken), root, "c", model=model, approve=True).status == "done"


def test_a_command_agent_the_directory_registers_is_resumed_with_waystation(root, model):
    os.makedirs(root)
    with open(os.path.join(root, "waystation.config.json"), "w") as f:
        f.write('{"agents": [{"name": "writer", "command": ["python3", "writer.py"]}]}')
    out = run_agent(failing_agent({"on": True}), root, "g", model=model)
    assert out.next == "fix the cause, then: waystation resume <DIR> g"
    assert "Fix the cause and run `waystation resume <DIR> g`" in Store(root).load("g")["resume_hint"]


def test_a_module_registered_under_the_name_is_no_command_that_resumes_the_task(root, model):
    os.makedirs(root)
    with open(os.path.join(root, "waystation.config.json"), "w") as f:
        f.write('{"agents": [{"name": "writer", "module": "./writer.mjs"}]}')
    assert run_agent(failing_agent({"on": True}), root, "m", model=model).next == f"fix the cause, then: {words('m')}"


def test_main_given_an_argv_names_the_script_that_called_it(root, model, tmp_path, monkeypatch, capsys):
    path = tmp_path / "my agents" / "writer.py"
    path.parent.mkdir()
    path.write_text("# hands waystation.main an argv of its own\n")
    monkeypatch.setattr(sys, "argv", [str(path), "--verbose"])
    script = f"{os.path.basename(sys.executable)} '{path}'"
    broken = {"on": True}
    assert waystation.main(failing_agent(broken), [root, "--task", "w", "--mode", "confirm"]) == 4
    printed = capsys.readouterr().out
    # The script as run, quoted for a shell, with what resumes this task: not its own arguments, which main was not given.
    assert f"approve: {script} {root} --task w --approve   reject: waystation reject {root} w --reason TEXT" in printed
    assert f"`{script} <DIR> --task w --approve`" in Store(root).load("w")["resume_hint"]
    broken["on"] = False
    assert waystation.main(failing_agent(broken), [root, "--task", "w", "--approve"]) == 0


def test_main_given_an_argv_by_a_program_that_is_no_file_says_so_in_words(root, model, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["-c"])
    assert waystation.main(failing_agent({"on": True}), [root, "--task", "w"]) == 1
    assert f"next: fix the cause, then: {words('w')}" in capsys.readouterr().out

"""A task written in a `with waystation.task(...)` block is continued by the script that runs it: its hints
name that script's command line (Waystation's own `resume` and `approve` refuse such a task), and the block
takes the ways out `run_agent` takes, so a confirm-mode failure can be approved and an uncertain effect
settled."""

from __future__ import annotations

import os
import sys

import pytest

import waystation
from waystation import StepFailed, Store, TaskNotRunnable


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

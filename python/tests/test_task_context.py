"""What an agent gets from its TaskContext: the stored value on the first run as on a resume, an effect that
happened kept as happened, a closed task that refuses every call, and an argument of the wrong type or form
refused at once, by name, with nothing written."""

from __future__ import annotations

import datetime
import os

import pytest

import waystation
from waystation import (
    Agent,
    ArgumentError,
    EffectOutcomeNotStored,
    OperationError,
    PlannedStep,
    StepFailed,
    Store,
    TaskClosedError,
    WaystationError,
    run_agent,
)


def versions(root, task_id):
    return Store(root).newest_version(task_id)


# ---- the value a step or an effect returns -----------------------------------------------------


def test_a_step_and_an_effect_return_on_their_first_run_what_they_return_after_a_resume(root, model):
    runs = []
    for attempt in range(2):
        seen = {}
        try:
            with waystation.task(root, "pair", plan=["pair", "send"], model=model) as t:
                seen["pair"] = t.step("pair", lambda: ("alice", 1.0))

                @t.step("send")
                def send():
                    # Inside the step: an effect's own value, first performed, then found done in the ledger.
                    seen["sent"] = t.effect("notify", "pair:notify", lambda key: {"at": (1, 2.0)})
                    return 1 / attempt  # fails on the first run, so the second resumes
        except StepFailed:
            pass
        runs.append(seen)
    first, resumed = runs
    assert first == resumed == {"pair": ["alice", 1], "sent": {"at": [1, 2]}}
    assert type(first["pair"]) is list and type(first["pair"][1]) is int and type(first["sent"]["at"][1]) is int


def test_the_decorator_form_binds_the_stored_result(root, model):
    with waystation.task(root, "d", plan=["a"], model=model) as t:

        @t.step("a")
        def a():
            return (1, 2.5)

    assert a == [1, 2.5]


# ---- an effect whose outcome cannot be stored --------------------------------------------------


def test_an_effect_that_happened_stays_happened_when_its_outcome_is_not_json(root, model):
    sent = []

    def send(key):
        sent.append(key)
        return {"sent_at": datetime.datetime(2024, 1, 1)}

    def run(t):
        t.step("send", lambda: t.effect("mail", "t:mail", send))

    agent = Agent(name="mailer", run=run, plan=[PlannedStep("send", "send")])
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "failed"
    cp = Store(root).load("t")
    message = cp["plan"][0]["error"]["message"]
    assert "side effect mail (key t:mail) happened, but its outcome could not be stored" in message and "datetime" in message
    effect = cp["side_effects"][0]
    assert effect["status"] == "done" and effect["outcome"] is None and "could not be stored" in effect["error"]
    # The next run neither performs it again nor asks a person whether it happened.
    out = run_agent(agent, root, "t", model=model)
    assert out.status == "done" and sent == ["t:mail"]


def test_the_error_of_an_unstored_outcome_is_raised_inside_the_step(root, model):
    with pytest.raises(StepFailed, match="happened, but its outcome could not be stored"):
        with waystation.task(root, "w", plan=["a"], model=model) as t:

            @t.step("a")
            def a():
                with pytest.raises(EffectOutcomeNotStored) as err:
                    t.effect("ping", "w:ping", lambda key: object())
                raise err.value


# ---- a closed task -------------------------------------------------------------------------------


def test_the_handle_of_a_finished_block_refuses_every_call_and_writes_nothing(root, model):
    with waystation.task(root, "after", plan=["a"], model=model) as t:
        t.step("a", lambda: 1)
    before = versions(root, "after")
    calls = [
        lambda: t.step("b", lambda: 2),
        lambda: t.complete([{"role": "user", "content": "hi"}]),
        lambda: t.effect("x", "k", lambda key: 1),
        lambda: t.remember("k", lambda: 1),
        lambda: t.phase("later"),
        lambda: t.write_artifact("late.txt", "x"),
        lambda: t.hint("later"),
        lambda: t.log("later"),
        lambda: t.record_recovery("a", "b", "c"),
        lambda: t.wait_for_human("why"),
    ]
    for call in calls:
        with pytest.raises(TaskClosedError, match="task after is closed"):
            call()
    assert versions(root, "after") == before
    cp = Store(root).load("after")
    assert cp["status"] == "done" and [s["id"] for s in cp["plan"]] == ["a"]
    assert not os.path.exists(os.path.join(root, "late.txt"))
    assert issubclass(TaskClosedError, WaystationError)


def test_the_handle_of_a_run_is_closed_once_run_agent_returns(root, model):
    kept = []

    def run(t):
        kept.append(t)
        t.step("a", lambda: 1)

    run_agent(Agent(name="keeper", run=run, plan=["a"]), root, "k", model=model)
    with pytest.raises(TaskClosedError):
        kept[0].step("b", lambda: 2)
    assert Store(root).load("k")["status"] == "done"


# ---- arguments of the wrong type or form ----------------------------------------------------------


@pytest.mark.parametrize(
    "call, names",
    [
        (lambda t: t.complete("hello"), "messages"),
        (lambda t: t.complete([{"role": "user"}]), '"content"'),
        (lambda t: t.complete([{"role": "user", "content": 5}]), '"content"'),
        (lambda t: t.hint(5), "text"),
        (lambda t: t.write_artifact("x.txt", 5), "content"),
        (lambda t: t.write_artifact(5, "x"), "path"),
        (lambda t: t.log(5), "message"),
        (lambda t: t.phase(None), "name"),
        (lambda t: t.step("a", 5), "fn"),
        (lambda t: t.step(5, lambda: 1), "step_id"),
        (lambda t: t.effect("mail", 5, lambda key: 1), "key"),
        (lambda t: t.effect("mail", "k", "not a function"), "perform"),
        (lambda t: t.effect("mail", "k", lambda key: 1, request=object()), "request"),
    ],
)
def test_an_argument_of_the_wrong_type_is_refused_by_name_and_nothing_is_written(root, model, call, names):
    with waystation.task(root, "args", plan=["a"], model=model) as t:
        before = versions(root, "args")
        with pytest.raises(ArgumentError) as err:
            call(t)
        assert versions(root, "args") == before
        t.step("a", lambda: 1)
    assert names in str(err.value)
    # Python's own errors for a bad argument catch it too, and so does the library's.
    assert isinstance(err.value, TypeError) and isinstance(err.value, ValueError) and isinstance(err.value, OperationError)
    assert not os.path.exists(os.path.join(root, "x.txt"))


def test_a_wrong_argument_inside_a_step_fails_the_step_with_its_message(root, model):
    with pytest.raises(StepFailed, match=r"t.complete\(messages\): messages must be"):
        with waystation.task(root, "in-step", plan=["a"], model=model) as t:
            t.step("a", lambda: t.complete("hello").text)
    assert Store(root).load("in-step")["plan"][0]["status"] == "failed"


def test_a_step_given_no_function_is_refused_rather_than_skipped(root, model):
    with pytest.raises(ArgumentError, match=r't.step\("a"\) was given no function'):
        with waystation.task(root, "nofn", plan=["a", "b"], model=model) as t:
            t.step("a")
    cp = Store(root).load("nofn")
    assert cp["status"] == "failed" and cp["plan"][0]["status"] == "pending"
    # The next call on the task says the same, before it runs.
    ran = []
    with pytest.raises(ArgumentError, match=r't.step\("a"\) was given no function'):
        with waystation.task(root, "nofn", plan=["a", "b"], model=model) as t:
            t.step("a")
            t.step("b", lambda: ran.append("b"))
    assert ran == []


def test_an_agent_takes_its_plan_in_the_forms_a_block_takes(root, model):
    for plan in (["a"], [("a", "step a")], [PlannedStep("a", "step a")], lambda o, env: [("a", "step a")]):
        agent = Agent(name="forms", run=lambda t: t.step("a", lambda: 1), plan=plan)
        out = run_agent(agent, root, None, model=model)
        assert out.status == "done"
        assert Store(root).load(out.task_id)["plan"][0]["id"] == "a"


@pytest.mark.parametrize("plan", [[5], [("a",)], [("a", "x"), ("a", "y")], "ab"])
def test_a_plan_in_another_form_is_refused_when_the_agent_is_defined(plan):
    with pytest.raises(ArgumentError, match=r"Agent\(plan=...\)"):
        Agent(name="bad", run=lambda t: None, plan=plan)

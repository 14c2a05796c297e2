"""Each version the runtime writes says which save boundary wrote it (`source.note`), in the TypeScript runtime's
words (test/electron/runtime/version-notes.test.ts), so a task's history reads as what the run did."""

from __future__ import annotations

import os

import pytest

import waystation
from waystation import StepFailed, Store


def notes(root, task_id):
    store = Store(root)
    return [store.load(task_id, v)["source"].get("note") for v in store.versions(task_id)]


def test_names_the_boundary_each_version_was_saved_at_in_order(root, model):
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "notes.txt"), "w", encoding="utf-8") as f:
        f.write("notes\n")
    fail_once = {"left": True}

    def run(t):
        t.phase("writing")

        def draft():
            t.remember("outline", lambda: ["a", "b"])
            return "text"

        t.step("draft", draft)
        t.artifact("notes.txt")
        t.step("publish", lambda: t.effect("http-publish", "k-1", lambda key: {"id": 7}))

        def check():
            if fail_once["left"]:
                fail_once["left"] = False
                raise RuntimeError("flaky")
            t.record_recovery("flaky", "ran again", "it passed")
            return "ok"

        t.step("check", check)
        t.skip("extra", "not needed")

    plan = ["draft", "publish", "check", "extra"]
    with pytest.raises(StepFailed):
        with waystation.task(root, "t", plan=plan, model=model) as t:
            run(t)
    with waystation.task(root, "t", plan=plan, model=model) as t:
        run(t)
    assert [n for n in notes(root, "t")] == [
        "task created",
        "phase writing",
        "remembered outline",
        "step draft done",
        "artifact notes.txt",
        "effect http-publish (key k-1): intent",
        "effect http-publish (key k-1): done",
        "step publish done",
        "step check failed",
        "resumed (human)",
        "artifact notes.txt",
        "recovery recorded",
        "step check done",
        "step extra skipped",
        "task done",
    ]


def test_names_a_model_reply_an_effect_left_uncertain_and_the_probe_that_settled_it(root, model):
    attempts = {"n": 0}

    def perform(key):
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise ConnectionError("connection reset")
        return {"id": 8}

    def run(t):
        def publish():
            t.complete([{"role": "user", "content": "draft it"}])
            return t.effect("http-publish", "k-2", perform, probe=lambda effect: {"happened": True, "outcome": {"id": 8}})

        t.step("publish", publish)

    with pytest.raises(StepFailed):
        with waystation.task(root, "e", plan=["publish"], model=model) as t:
            run(t)
    assert notes(root, "e") == [
        "task created",
        "model reply",
        "effect http-publish (key k-2): intent",
        "effect http-publish (key k-2): uncertain",
        "step publish failed",
    ]
    with waystation.task(root, "e", plan=["publish"], model=model) as t:
        run(t)
    later = notes(root, "e")
    assert "effect http-publish (key k-2): probed, it happened" in later
    assert later[-1] == "task done"

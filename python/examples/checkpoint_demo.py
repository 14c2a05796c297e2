#!/usr/bin/env python3
"""The first article's four-step demo, as a Waystation Python agent.

    python3 python/examples/checkpoint_demo.py DIR [--task ID] [--mode manual|auto|confirm]

It analyses a requirement, writes the code, checks it for errors and generates
tests, one model call a step. The third step fails on purpose unless
SKIP_FAILURE=1; run it again (with SKIP_FAILURE=1) and it resumes at that step,
with the first two steps' results read back, not recomputed. The task id is
demo-task-001 unless --task is given; given the id of a task the TypeScript
`checkpoint-demo` agent wrote, it continues that task (same name, step ids and
prompts).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import waystation  # noqa: E402
from waystation import PlannedStep, TaskContext  # noqa: E402

SIMULATED_FAILURE = "simulated failure: the model call timed out (set SKIP_FAILURE=1 to let this step pass)"
STEP_OUTPUT = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string", "minLength": 1}

STEPS = [
    ("analyse", "analyse the requirement", lambda r: f"Break this requirement into sub-tasks: {r}"),
    ("write-code", "write the code", lambda r: "Write the code for the sub-tasks above; handle the edge cases."),
    ("check-errors", "check for errors", lambda r: "Check the code above for bugs and propose fixes."),
    ("generate-tests", "generate tests", lambda r: "Generate unit tests for the code above."),
]


def run(t: TaskContext) -> None:
    # The conversation is rebuilt from stored step results, so a resumed run sends the model what an uninterrupted one would.
    history: list[dict[str, str]] = []
    for step_id, _name, prompt_of in STEPS:
        prompt = prompt_of(t.options["requirement"])

        @t.step(step_id)
        def output() -> str:
            if step_id == "check-errors" and os.environ.get("SKIP_FAILURE") != "1":
                raise RuntimeError(SIMULATED_FAILURE)
            return t.complete([*history, {"role": "user", "content": prompt}]).text

        history += [{"role": "user", "content": prompt}, {"role": "assistant", "content": output}]


agent = waystation.Agent(
    name="checkpoint-demo",
    description="The first article's four steps; fails at step 3 unless SKIP_FAILURE=1, then resumes there.",
    options={
        "type": "object",
        "properties": {"requirement": {"type": "string", "minLength": 1, "default": "write a function that looks up the weather for a city"}},
    },
    goal=lambda o: f"{o['requirement']}: analysed, written, checked and tested",
    plan=[PlannedStep(i, n, STEP_OUTPUT) for i, n, _ in STEPS],
    run=run,
)

if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--task" not in argv and not any(a.startswith("--task=") for a in argv) and "--describe" not in argv:
        argv += ["--task", "demo-task-001"]
    sys.exit(waystation.main(agent, argv))

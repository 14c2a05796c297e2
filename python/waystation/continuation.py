"""What continues a task, as the hints the runtime saves and prints name it (electron/runtime/continue-hint.ts).

`waystation resume <DIR> ID` where Waystation runs the task's agent (built
in, a module, a registered command). Any other task was written by a Python
program that Waystation cannot run, and `waystation resume` and `approve`
refuse it: naming them would send a person into that refusal, so the hint
names the program instead. Two kinds of program run such tasks:

- a `waystation.main` agent, run again as `python3 writer.py <DIR> --task ID`,
  with `--approve` or `--effect-happened KEY` as its command line takes them;
- a script around a `with waystation.task(...)` block, run again as it was run
  (its whole command line); approving a resume plan and settling an effect are
  arguments of `waystation.task` (`approve=True`, `settle={KEY: bool}`), which
  no command line can pass, so the hint says so in words.

`<DIR>` is left for the caller to fill in with the directory as the person
named it (`fill_directory`), as the TypeScript CLI does.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Optional

# Agents the Waystation app and CLI run themselves: `waystation resume` continues their tasks, whoever wrote them.
_BUILT_IN_AGENTS = frozenset({"checkpoint-demo", "md-summarizer"})


@dataclass(frozen=True)
class Program:
    """The program driving this run: its command, shell-quoted, and how it takes a resume's choices."""

    command: str
    #: "main": a `waystation.main` agent (`<DIR> --task ID` and flags); "script": a `with waystation.task(...)` block.
    kind: str


#: The program of the run under way, set by `waystation.main` and by `waystation.task` for their runs.
PROGRAM: ContextVar[Optional[Program]] = ContextVar("waystation_program", default=None)


def _python() -> str:
    return os.path.basename(sys.executable) or "python3"


def main_program() -> Optional[Program]:
    """`python3 writer.py`: how this `waystation.main` program was run, when it is a file (not `-c` or an interactive session)."""
    program = sys.argv[0] if sys.argv else ""
    if not program or not os.path.isfile(program):
        return None
    return Program(f"{_python()} {shlex.quote(program)}", "main")


def script_program() -> Program:
    """This script's whole command line (`python3 report.py --week 12`), shell-quoted; words when it is not a file."""
    program = sys.argv[0] if sys.argv else ""
    if not program or not os.path.isfile(program):
        return Program("", "script")
    return Program(" ".join([_python(), *(shlex.quote(a) for a in sys.argv)]), "script")


def _runnable(cp: dict[str, Any]) -> bool:
    agent = cp.get("agent") or {}
    # Registered in the directory (its command recorded), a module, or built in: Waystation runs it.
    return bool(agent.get("command") or agent.get("module")) or agent.get("name") in _BUILT_IN_AGENTS


def _continuation(cp: dict[str, Any], verb: str, extra: str) -> tuple[str, bool]:
    """What to do for `verb` on the task: (text, whether the text is a command rather than words)."""
    program = PROGRAM.get()
    task_id = cp["task_id"]
    if program is None or verb not in ("resume", "approve") or _runnable(cp):
        return f"waystation {verb} <DIR> {task_id}{extra}", True
    if program.kind == "main":
        return f"{program.command} <DIR> --task {task_id}{' --approve' if verb == 'approve' else ''}{extra}", True
    again = f"`{program.command}`" if program.command else f"the program that wrote {task_id}"
    if verb == "approve":
        return f"run {again} again with `approve=True` passed to `waystation.task(...)`", False
    if program.command:
        return program.command, True
    # Run with `python3 -c` or typed into a session: no command line runs it again. Words that read after "run".
    return f"the program that wrote {task_id} again", False


def hint(cp: dict[str, Any], verb: str, extra: str = "") -> str:
    """What continues the task, as a saved resume hint writes it: a command in backticks, words as they are."""
    text, command = _continuation(cp, verb, extra)
    return f"`{text}`" if command else text


def next_step(cp: dict[str, Any], verb: str, extra: str = "") -> str:
    """What continues the task, as an outcome's `next` line writes it (a command bare, words as they are)."""
    return _continuation(cp, verb, extra)[0]


def settle_words(key: str) -> str:
    """How a person says whether an effect without a probe happened, for the program under way."""
    program = PROGRAM.get()
    if program is not None and program.kind == "script":
        again = f"`{program.command}`" if program.command else "the program"
        return (
            f"check by hand, then run {again} again with `settle={{{key!r}: True}}` (it happened) or "
            f"`settle={{{key!r}: False}}` (it did not) passed to `waystation.task(...)`"
        )
    # Both `waystation resume` and a waystation.main program take these flags.
    return f"check by hand, then resume with --effect-happened {key} or --effect-not-happened {key}"


def fill_directory(text: str, root: str) -> str:
    """`<DIR>` in a command hint replaced by `root`, quoted for a POSIX shell where it must be
    (shared/checkpoint/fill-directory.ts), so the command printed runs as it is pasted."""
    quoted = root if re.fullmatch(r"[A-Za-z0-9_./:@%+=,-]+", root) else "'" + root.replace("'", "'\\''") + "'"
    return text.replace("<DIR>", quoted)

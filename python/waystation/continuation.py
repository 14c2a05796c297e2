"""What continues a task, as the hints the runtime saves and prints name it (electron/runtime/continue-hint.ts).

`waystation resume <DIR> ID` where Waystation runs the task's agent (built
in, a module, a registered command). Any other task was written by a Python
program that Waystation cannot run, and `waystation resume` and `approve`
refuse it: naming them would send a person into that refusal, so the hint
names the program instead. Three kinds of program run such tasks:

- a `waystation.main` agent, run again as `python3 writer.py <DIR> --task ID`,
  with `--approve` or `--effect-happened KEY` as its command line takes them
  (also when the script hands `main` an argv of its own);
- a script around a `with waystation.task(...)` block, run again as it was run
  (its whole command line); approving a resume plan and settling an effect are
  arguments of `waystation.task` (`approve=True`, `settle={KEY: bool}`), which
  no command line can pass, so the hint says so in words;
- a caller's own code around `run_agent` (or `edit_step_result`), whose
  command Waystation cannot know: the hint says, as the TypeScript side says of
  a task another program wrote, to run that program again, unless the
  directory registers the agent as a command, which `waystation resume` starts.

A program with no command line to name (`python3 -c`, an interactive session)
is named so in words too. `<DIR>` is left for the caller to fill in with the
directory as the person named it (`fill_directory`), as the TypeScript CLI does.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Optional

# Agents the Waystation app and CLI run themselves: `waystation resume` continues their tasks, whoever wrote them.
_BUILT_IN_AGENTS = frozenset({"checkpoint-demo", "md-summarizer"})
# Where a directory registers its agents, and a size no list of agents comes near (electron/runtime/agent-catalog.ts).
_AGENTS_CONFIG_FILE = "waystation.config.json"
_AGENTS_CONFIG_MAX_BYTES = 1024 * 1024
# The call a program without a command line of its own takes a resume's choices through.
_CHOICES_GO_TO = {"script": "waystation.task(...)", "caller": "run_agent(...)"}


@dataclass(frozen=True)
class Program:
    """The program driving this run: its command, shell-quoted ("" when none runs it again), and how it takes a resume's choices."""

    command: str
    #: "main": a `waystation.main` agent (`<DIR> --task ID` and flags); "script": a `with waystation.task(...)` block;
    #: "caller": a caller's own code around `run_agent`, whose command Waystation cannot know.
    kind: str


#: The program of the run under way, set by `waystation.main`, `waystation.task` and `run_agent` for their runs;
#: None where Waystation's own commands continue the task.
PROGRAM: ContextVar[Optional[Program]] = ContextVar("waystation_program", default=None)


def _python() -> str:
    return os.path.basename(sys.executable) or "python3"


def main_program() -> Program:
    """`python3 writer.py`: how this `waystation.main` program was run; no command when it is no file (`-c`, a session)."""
    program = sys.argv[0] if sys.argv else ""
    if not program or not os.path.isfile(program):
        return Program("", "main")
    return Program(f"{_python()} {shlex.quote(program)}", "main")


def script_program() -> Program:
    """This script's whole command line (`python3 report.py --week 12`), shell-quoted; words when it is not a file."""
    program = sys.argv[0] if sys.argv else ""
    if not program or not os.path.isfile(program):
        return Program("", "script")
    return Program(" ".join([_python(), *(shlex.quote(a) for a in sys.argv)]), "script")


def caller_program(root: str, agent_name: Optional[str]) -> Optional[Program]:
    """The program of a caller that drives a task from its own code; None when ROOT registers the agent as a command,
    since `waystation resume` then starts it."""
    return None if agent_name and _registers_command(root, agent_name) else Program("", "caller")


def _registers_command(root: str, name: str) -> bool:
    """Whether ROOT/waystation.config.json registers a command agent named `name`."""
    path = os.path.join(root, _AGENTS_CONFIG_FILE)
    try:
        # isfile: a pipe or a device in the file's place is not waited on.
        if not os.path.isfile(path) or os.path.getsize(path) > _AGENTS_CONFIG_MAX_BYTES:
            return False
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return False
    # Read leniently: where the app finds the file wrong, `waystation resume` says what is wrong with it, which a person can act on.
    agents = doc.get("agents") if isinstance(doc, dict) else None
    return isinstance(agents, list) and any(
        isinstance(a, dict) and a.get("name") == name and isinstance(a.get("command"), list) and bool(a["command"]) for a in agents
    )


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
    if program.kind == "main" and program.command:
        return f"{program.command} <DIR> --task {task_id}{' --approve' if verb == 'approve' else ''}{extra}", True
    if program.command and verb == "resume":
        return program.command, True
    if program.command:
        return f"run `{program.command}` again with `approve=True` passed to `{_CHOICES_GO_TO[program.kind]}`", False
    # No command line runs it again: the words the TypeScript side says of a task another program wrote.
    name = (cp.get("agent") or {}).get("name")
    again = f"run the program that wrote {task_id} again" + (f' (agent "{name}")' if name else "")
    if verb == "approve":
        again += " with " + ("`--approve`" if program.kind == "main" else f"`approve=True` passed to `{_CHOICES_GO_TO[program.kind]}`")
    return f"{again}; Waystation does not resume it", False


def hint(cp: dict[str, Any], verb: str, extra: str = "") -> str:
    """What continues the task, as a saved resume hint writes it: a command in backticks, words as they are."""
    text, command = _continuation(cp, verb, extra)
    return f"`{text}`" if command else text


def run_hint(cp: dict[str, Any], verb: str, extra: str = "") -> str:
    """`hint` as what follows "Fix the cause and": "run `COMMAND`", or the words, which say "run" themselves."""
    text, command = _continuation(cp, verb, extra)
    return f"run `{text}`" if command else text


def next_step(cp: dict[str, Any], verb: str, extra: str = "") -> str:
    """What continues the task, as an outcome's `next` line writes it (a command bare, words as they are)."""
    return _continuation(cp, verb, extra)[0]


def settle_words(key: str) -> str:
    """How a person says whether an effect without a probe happened, for the program under way."""
    program = PROGRAM.get()
    if program is not None and program.kind in _CHOICES_GO_TO:
        again = f"`{program.command}`" if program.command else "the program"
        return (
            f"check by hand, then run {again} again with `settle={{{key!r}: True}}` (it happened) or "
            f"`settle={{{key!r}: False}}` (it did not) passed to `{_CHOICES_GO_TO[program.kind]}`"
        )
    # Both `waystation resume` and a waystation.main program take these flags.
    return f"check by hand, then resume with --effect-happened {key} or --effect-not-happened {key}"


def fill_directory(text: str, root: str) -> str:
    """`<DIR>` in a command hint replaced by `root`, quoted for a POSIX shell where it must be
    (shared/checkpoint/fill-directory.ts), so the command printed runs as it is pasted."""
    quoted = root if re.fullmatch(r"[A-Za-z0-9_./:@%+=,-]+", root) else "'" + root.replace("'", "'\\''") + "'"
    return text.replace("<DIR>", quoted)

"""`waystation.main(agent)`: the command line of a Python agent, and the protocol the app uses to run it.

    python3 my_agent.py DIR [--task ID] [--mode manual|auto|confirm] [--max-attempts N]
                            [--approve] [--rerun-drifted] [--note TEXT]
                            [--effect-happened KEY] [--effect-not-happened KEY]
                            [--<option> VALUE ...] [--describe]

A new task id starts the task; an existing one resumes it (running the script
again resumes). The app and `waystation run` start a command agent the same
way, with the directory and the task id as arguments, and hand the rest over
in the environment (each overrides the matching argument):

    WAYSTATION_DIR, WAYSTATION_TASK_ID   the directory and the task
    WAYSTATION_OPTIONS_FILE              a file holding the options, as a JSON object (a new task)
    WAYSTATION_OPTIONS                   the same options when small (under 64 KiB); the file wins
    WAYSTATION_MODE, WAYSTATION_MAX_ATTEMPTS
    WAYSTATION_ACTION                    start | resume | approve
    WAYSTATION_TRIGGER                   human | auto (an automatic resume counts against the attempt limit)
    WAYSTATION_RESUME                    JSON: {"rerun_drifted": bool, "settle": {KEY: bool}, "note": str}
    WAYSTATION_ACTOR                     who asked, for recorded decisions

The exit code says how the task ended: 0 done, 1 failed, 2 bad input (nothing
written), 3 waiting for a human, 4 waiting for approval, 5 halted, 6 another
runner holds the task, 7 crashed, 8 stopped by a person (`waystation stop`, the
app's Stop: the run stopped before its next step or effect, saved the stop and
let the lease go; the task is interrupted until a person resumes it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional

from .continuation import PROGRAM, fill_directory, main_program
from .errors import OperationError, WaystationError
from .jsonutil import MAX_SAFE_INTEGER
from .options import RESERVED_OPTION_NAMES, unknown_flag_message
from .runtime import Agent, MODES, Outcome, Run, load_for_write, run_agent
from .store import Store

EXIT_BAD_INPUT = 2
EXIT_HALTED = 5
EXIT_BUSY = 6
EXIT_CRASHED = 7


def _report(line: str) -> None:
    print(line, flush=True)


def _option_flags(parser: argparse.ArgumentParser, agent: Agent) -> list[str]:
    names = []
    for key, sub in (agent.options.get("properties") or {}).items():
        kind = (sub or {}).get("type")
        flag = f"--{key}"
        if kind == "boolean":
            parser.add_argument(flag, dest=f"opt:{key}", action="store_const", const=True, default=None, help=(sub or {}).get("description"))
        else:
            parser.add_argument(flag, dest=f"opt:{key}", default=None, help=(sub or {}).get("description"), metavar=key.upper())
        names.append(key)
    return names


def _coerce(value: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
        if kind in ("array", "object"):
            return json.loads(value)
    except ValueError:
        return value
    return value


def main(agent: Agent, argv: Optional[list[str]] = None) -> int:
    """Run `agent` from the command line (or from the app); returns the exit code (see the module's docstring)."""
    # The hints this run prints and saves continue a task Waystation cannot run with this very script, run again with
    # the directory and the task: a script that hands main an argv of its own is still the program that wrote the task.
    token = PROGRAM.set(main_program())
    try:
        return _main(agent, argv)
    finally:
        PROGRAM.reset(token)


def built_in_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The command line every agent has; its flags are options.RESERVED_OPTION_NAMES, which no agent option may take."""
    # No abbreviations: `--app` must not quietly mean --approve, nor an option's prefix the option.
    parser = argparse.ArgumentParser(prog=prog, description=description, allow_abbrev=False)
    parser.add_argument("dir", nargs="?", help="the checkpoint directory")
    parser.add_argument("--task", help="the task id (a new id starts the task, an existing one resumes it)")
    parser.add_argument("--mode", choices=MODES, help="the recovery mode of a new task")
    parser.add_argument("--max-attempts", type=int, help="auto mode: how many automatic resumes (default 3)")
    parser.add_argument("--approve", action="store_true", help="approve the pending resume plan and run exactly it")
    parser.add_argument("--rerun-drifted", action="store_true", help="rerun the steps whose artifacts drifted")
    parser.add_argument("--note", help="passed to a step waiting for a human")
    parser.add_argument("--effect-happened", action="append", default=[], metavar="KEY")
    parser.add_argument("--effect-not-happened", action="append", default=[], metavar="KEY")
    parser.add_argument("--describe", action="store_true", help="print the agent's name, description and options schema as JSON")
    return parser


def _main(agent: Agent, argv: Optional[list[str]]) -> int:
    parser = built_in_parser(os.path.basename(sys.argv[0]), agent.description)
    names = _option_flags(parser, agent)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # argparse would say only "unrecognized arguments"; a typo gets the option it is nearest, as options do elsewhere.
        parser.print_usage(sys.stderr)
        print(f"error: {unknown_flag_message(agent.name, unknown[0], [*names, *RESERVED_OPTION_NAMES])}", file=sys.stderr)
        return EXIT_BAD_INPUT
    env = os.environ
    if args.describe:
        print(json.dumps(agent.describe()))
        return 0
    root = env.get("WAYSTATION_DIR") or args.dir
    if not root:
        parser.print_usage(sys.stderr)
        print("error: the checkpoint directory is required (DIR or WAYSTATION_DIR)", file=sys.stderr)
        return EXIT_BAD_INPUT
    task_id = env.get("WAYSTATION_TASK_ID") or args.task
    options: dict[str, Any] = {}
    props = agent.options.get("properties") or {}
    for key in names:
        value = getattr(args, f"opt:{key}")
        if value is not None:
            options[key] = value if not isinstance(value, str) else _coerce(value, props.get(key) or {})
    try:
        # Options of any size come in a file: one environment variable holds at most 128 KiB on Linux.
        given_text = None
        if env.get("WAYSTATION_OPTIONS_FILE"):
            with open(env["WAYSTATION_OPTIONS_FILE"], encoding="utf-8") as f:
                given_text = f.read()
        elif env.get("WAYSTATION_OPTIONS"):
            given_text = env["WAYSTATION_OPTIONS"]
        if given_text is not None:
            given = json.loads(given_text)
            if not isinstance(given, dict):
                raise ValueError("not a JSON object")
            options.update(given)
        resume = json.loads(env.get("WAYSTATION_RESUME") or "{}")
    except OSError as err:
        print(f"error: cannot read the options file {env.get('WAYSTATION_OPTIONS_FILE')} ({err.strerror}); nothing was written", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as err:
        print(f"error: WAYSTATION_OPTIONS(_FILE) / WAYSTATION_RESUME must be JSON objects ({err}); nothing was written", file=sys.stderr)
        return EXIT_BAD_INPUT
    mode = env.get("WAYSTATION_MODE") or args.mode or "manual"
    try:
        raw = env.get("WAYSTATION_MAX_ATTEMPTS")
        max_attempts = int(raw) if raw else (args.max_attempts if args.max_attempts is not None else 3)
    except ValueError:
        max_attempts = -1
    # 0 is a limit too (no automatic resume); the bound is the one JSON keeps exactly, as the TypeScript CLI says.
    if not 0 <= max_attempts <= MAX_SAFE_INTEGER:
        shown = raw if raw else args.max_attempts
        print(f'error: --max-attempts must be a whole number from 0 to {MAX_SAFE_INTEGER}, not "{shown}"; nothing was written', file=sys.stderr)
        return EXIT_BAD_INPUT
    action = env.get("WAYSTATION_ACTION") or ("approve" if args.approve else None)
    settle = {k: True for k in args.effect_happened}
    settle.update({k: False for k in args.effect_not_happened})
    settle.update({k: bool(v) for k, v in (resume.get("settle") or {}).items()})
    actor = env.get("WAYSTATION_ACTOR") or None
    registered = env.get("WAYSTATION_AGENT_NAME")
    if registered and registered != agent.name:
        print(
            f"error: this program is registered as agent {registered!r} but its agent is named {agent.name!r}; "
            "use the same name in waystation.config.json. Nothing was written.",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    try:
        agent_ref = json.loads(env.get("WAYSTATION_AGENT_REF") or "{}")
    except ValueError:
        agent_ref = {}
    agent_ref = {k: v for k, v in agent_ref.items() if k in ("command", "project_root", "command_sha256")} if isinstance(agent_ref, dict) else {}
    try:
        if action == "start" and task_id and Store(root).exists(task_id) and Store(root).newest_version(task_id) > 0:
            raise OperationError("exists", f"task {task_id} already exists in {root}; resume it instead")
        if action in ("resume", "approve") and (not task_id or not Store(root).exists(task_id)):
            raise OperationError("not-found", f'there is no task "{task_id}" in {os.path.abspath(root)}')
        # What describes a new task does not change one that exists: say so rather than drop the flags unremarked.
        start_only = [f"--{k}" for k in names if getattr(args, f"opt:{k}") is not None]
        start_only += [flag for flag, given in (("--mode", args.mode), ("--max-attempts", args.max_attempts)) if given is not None]
        if start_only and task_id and Store(root).exists(task_id) and Store(root).newest_version(task_id) > 0:
            one = len(start_only) == 1
            _report(
                f"note: task {task_id} exists, so this resumes it with the options and recovery mode it recorded; "
                f"{', '.join(start_only)} only {'describes' if one else 'describe'} a new task, and {'was' if one else 'were'} ignored"
            )
        trigger = env.get("WAYSTATION_TRIGGER") or "human"
        if trigger == "auto" and action == "resume":
            outcome = _auto_resume(agent, root, task_id or "", actor, agent_ref.get("command_sha256"))
        else:
            outcome = run_agent(
                agent,
                root,
                task_id,
                options=options,
                mode=mode,
                max_auto_attempts=max_attempts,
                report=_report,
                rerun_drifted=bool(args.rerun_drifted or resume.get("rerun_drifted")),
                settle=settle or None,
                note=resume.get("note") or args.note,
                approve=action == "approve",
                actor=actor,
                agent_ref=agent_ref,
                # Started by the app, the runner supervises automatic resumes; run by hand, this process does.
                supervise=not env.get("WAYSTATION_ACTION"),
            )
    except OperationError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BUSY if err.code == "busy" else EXIT_HALTED if err.code == "halted" else EXIT_BAD_INPUT
    except WaystationError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_CRASHED
    _print_outcome(outcome, root)
    return outcome.exit_code


def _auto_resume(agent: Agent, root: str, task_id: str, actor: Optional[str], command_sha256: Optional[str]) -> Outcome:
    """One automatic resume (the host's start-up recovery): counted against the attempt limit."""
    run = Run(root, task_id, agent, report=_report, actor=actor, command_sha256=command_sha256)
    try:
        early = run.resume("auto")
        return early or run.drive()
    finally:
        run.release()


def _print_outcome(outcome: Outcome, root: str) -> None:
    message = fill_directory(outcome.message, root)
    # A run a person stopped leaves its task interrupted (stored running, no holder), as the task list names it.
    shown = "interrupted" if outcome.stopped and outcome.status == "running" else outcome.status
    print(f"{outcome.task_id}: {shown} at version {outcome.version}: {message}", flush=True)
    if outcome.next:
        print(f"next: {fill_directory(outcome.next, root)}", flush=True)


__all__ = ["main", "load_for_write"]

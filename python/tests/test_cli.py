"""The command line `waystation.main` gives an agent: options that would shadow its own flags are refused when
the agent is defined, an unknown flag is named with the one it is nearest, a DIR that is a file is bad input,
and what only describes a new task is said to be ignored when the task is resumed."""

from __future__ import annotations

import pytest

import waystation
from waystation import Agent, ArgumentError, OperationError, PlannedStep, Store, run_agent
from waystation.cli import EXIT_BAD_INPUT, built_in_parser
from waystation.options import RESERVED_OPTION_NAMES


def writer(options=None):
    props = options or {"topic": {"type": "string", "default": "checkpoints"}}
    return Agent(
        name="writer",
        options={"type": "object", "properties": props},
        plan=[PlannedStep("draft", "draft")],
        goal=lambda o: "write",
        run=lambda t: t.step("draft", lambda: t.options.get("topic")),
    )


@pytest.mark.parametrize("name", ["mode", "task", "note", "approve", "describe", "max_attempts", "effect-happened", "help"])
def test_an_option_named_like_a_built_in_flag_is_refused_when_the_agent_is_defined(name):
    with pytest.raises(ArgumentError) as err:
        writer({name: {"type": "string"}})
    message = str(err.value)
    assert f'agent writer cannot have an option named "{name}"' in message
    assert all(flag in message for flag in RESERVED_OPTION_NAMES)


def test_the_reserved_names_are_the_flags_of_the_command_line():
    flags = {s[2:] for a in built_in_parser("p", "")._actions for s in a.option_strings if s.startswith("--")}
    assert flags == set(RESERVED_OPTION_NAMES)


def test_a_block_may_record_options_of_any_name(root, model):
    with waystation.task(root, "b", plan=["a"], options={"mode": "fast"}, model=model) as t:
        assert t.options == {"mode": "fast"}
        t.step("a", lambda: 1)


def test_an_unknown_flag_is_named_with_the_option_it_is_nearest(root, capsys):
    assert waystation.main(writer(), [root, "--task", "w", "--topc", "x"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert 'error: agent writer has no option "topc" (did you mean "topic"?)' in err
    assert "unrecognized arguments" not in err
    assert waystation.main(writer(), [root, "--aprove"]) == EXIT_BAD_INPUT
    assert '(did you mean "approve"?)' in capsys.readouterr().err
    assert not Store(root).list_tasks()


def test_a_dir_that_is_a_file_is_bad_input(tmp_path, capsys, monkeypatch):
    (tmp_path / "afile").write_text("not a directory")
    monkeypatch.chdir(tmp_path)
    assert waystation.main(writer(), ["afile", "--task", "x1"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "error: afile is not a directory; nothing was written" in err
    with pytest.raises(OperationError, match="is not a directory") as refused:
        run_agent(writer(), str(tmp_path / "afile" / "sub"), "x1")
    assert refused.value.code == "invalid"
    assert (tmp_path / "afile").read_text() == "not a directory"


def test_options_and_mode_on_a_resume_are_said_to_be_ignored(root, capsys):
    assert waystation.main(writer(), [root, "--task", "w", "--topic", "first"]) == 0
    capsys.readouterr()
    assert waystation.main(writer(), [root, "--task", "w", "--topic", "second", "--mode", "auto"]) == 0
    out = capsys.readouterr().out
    assert "note: task w exists, so this resumes it with the options and recovery mode it recorded; --topic, --mode only describe a new task, and were ignored" in out
    cp = Store(root).load("w")
    assert cp["agent"]["options"] == {"topic": "first"} and cp["recovery"]["mode"] == "manual"

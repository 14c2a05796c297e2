"""Options an agent does not have: refused in the TypeScript runtime's words, nothing written."""

from __future__ import annotations

import os

import pytest

from waystation import Agent, OperationError, PlannedStep, run_agent
from waystation.options import unknown_options_message

SCHEMA = {"type": "object", "properties": {"input": {"type": "string"}, "output": {"type": "string"}}}


def test_a_misspelt_option_is_named_with_the_option_it_is_nearest_and_the_options_there_are():
    assert unknown_options_message("a", SCHEMA, {"inptu": "notes"}) == (
        'agent a has no option "inptu" (did you mean "input"?); its options: "input", "output". Nothing was written.'
    )
    assert unknown_options_message("a", {"type": "object", "properties": {}}, {"colour": "red", "size": 3}) == (
        'agent a has no option "colour", no option "size"; it takes no options. Nothing was written.'
    )
    assert unknown_options_message("a", SCHEMA, {"input": "x"}) is None


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},
        {"type": "object", "properties": {"input": {"type": "string"}}, "additionalProperties": True},
        {"type": "object", "properties": {"input": {"type": "string"}}, "additionalProperties": {"type": "number"}},
    ],
)
def test_a_schema_that_takes_other_keys_takes_them(schema):
    assert unknown_options_message("a", schema, {"n": 1}) is None


def test_a_start_with_an_option_the_agent_does_not_have_writes_nothing(root):
    agent = Agent(name="a", options=SCHEMA, plan=[PlannedStep("s", "s")], goal="g", run=lambda t: t.step("s", lambda: 1))
    with pytest.raises(OperationError) as err:
        run_agent(agent, root, "t", options={"inptu": "notes"})
    assert err.value.code == "invalid"
    assert 'has no option "inptu" (did you mean "input"?)' in str(err.value)
    assert not os.path.exists(os.path.join(root, "t"))

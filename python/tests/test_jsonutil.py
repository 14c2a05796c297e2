"""JSON as the TypeScript side writes it: numbers, canonical key order, and the structured diff."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from waystation.jsonutil import DiffApplyError, apply_diff, canonical_json, compute_diff, dumps, js_number

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60).filter(lambda n: int(float(n)) == n) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)


@pytest.mark.parametrize(
    "value, text",
    [(1.0, "1"), (0.5, "0.5"), (1e-7, "1e-7"), (1e-6, "0.000001"), (1e21, "1e+21"), (1.5e300, "1.5e+300"), (-0.0, "0"), (0.00001234, "0.00001234"), (123.0e18, "123000000000000000000"), (3, "3")],
)
def test_numbers_print_as_in_ecmascript(value, text):
    assert js_number(value) == text


def test_non_finite_numbers_are_refused():
    with pytest.raises(ValueError):
        dumps(float("nan"))


def test_integers_past_what_a_javascript_reader_keeps_exactly_are_refused_and_others_printed_as_it_prints_them():
    # JSON.parse would read 2**53 + 1 as 2**53: the two languages would store different values under one name.
    assert dumps([2**53 - 1, -(2**53 - 1)]) == "[9007199254740991,-9007199254740991]"
    for value in (2**53 + 1, -(2**53 + 1), 2**70 + 1):
        with pytest.raises(ValueError, match="past the integers JSON keeps exactly"):
            dumps({"n": value})
    # Held exactly by a double: the text JSON.stringify writes for it, so the blob hash is the same in both languages.
    assert dumps([2**53, 2**70, -(2**70)]) == "[9007199254740992,1.1805916207174113e+21,-1.1805916207174113e+21]"
    assert dumps(2**70) == dumps(float(2**70))


def test_canonical_json_sorts_keys_by_utf16_code_unit():
    # U+1F600 is a surrogate pair (0xD83D...) and sorts before U+FF5E in UTF-16, after it by code point.
    assert canonical_json({"\uff5e": 1, "\U0001f600": 2, "a": [True, None]}) == '{"a":[true,null],"\U0001f600":2,"\uff5e":1}'


def test_non_json_values_are_refused_with_the_type_named():
    with pytest.raises(TypeError, match="set is not JSON"):
        dumps({"x": {1, 2}})


def test_lone_surrogates_are_escaped_as_json_stringify_does():
    assert dumps("a\ud800") == '"a\\ud800"'


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
def test_applying_the_diff_of_two_values_gives_the_second(a, b):
    ops = json.loads(dumps(compute_diff(a, b)))  # as stored in a delta envelope
    assert json.loads(dumps(apply_diff(a, ops))) == json.loads(dumps(b))


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_dumps_round_trips(value):
    assert json.loads(dumps(value)) == json.loads(json.dumps(value))
    assert json.loads(canonical_json(value)) == json.loads(json.dumps(value))


def test_a_delta_that_does_not_fit_its_base_is_refused():
    with pytest.raises(DiffApplyError, match="past the end"):
        apply_diff([1], [{"op": "remove", "path": [3]}])
    with pytest.raises(DiffApplyError, match="no key"):
        apply_diff({}, [{"op": "remove", "path": ["x"]}])

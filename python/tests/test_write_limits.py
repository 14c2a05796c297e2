"""What readers refuse is never written: a segment starts a new file before the readers' limit for one file,
a value larger than that limit or nested deeper than readers parse is refused with nothing written, and the
step that returned it is left failed, not running. The rules of electron/store/write-limits.ts."""

from __future__ import annotations

import contextlib
import os

import pytest

import waystation
from waystation import StepFailed, Store, WriteLimitError, files
from waystation.lease import acquire_lease
from waystation.write_limits import MAX_VALUE_DEPTH, nests_within

from helpers import checkpoint, without_version

LIMIT = 64 * 1024  # a store whose readers load 64 KiB of a file: the rules at a size a test writes quickly


def nested(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


def save_results(store, lease, sizes):
    """Save one version per size, each carrying a result of that many bytes; returns the versions' files."""
    cp = store.load("t")
    for i, size in enumerate(sizes):
        cp = store.save("t", cp["version"], without_version(cp), results={f"s{i % 4}": "x" * size}, lease=lease)
    return sorted(os.listdir(os.path.join(store.task_dir("t"), "versions")))


def test_a_segment_starts_a_new_file_before_the_readers_limit(root):
    store = Store(root, max_file_bytes=LIMIT)
    store.create(checkpoint("t", steps=4))
    lease = acquire_lease(store.task_dir("t"), "t", heartbeat_ms=0)
    names = save_results(store, lease, [20_000] * 8)
    store.settle("t")
    lease.release()
    versions = [n for n in names if n.endswith(".json")]
    # Eight versions of 20 KB would make a 160 KB segment: each file holds what fits under 64 KiB.
    assert len(versions) > 2
    for name in versions:
        assert os.path.getsize(os.path.join(store.task_dir("t"), "versions", name)) <= LIMIT
    # Every version and result reads back, with the same limit as the writer kept.
    cp = store.load("t")
    assert cp["version"] == 9
    assert [len(store.read_blob("t", s["result_ref"])) for s in cp["plan"]] == [20_000] * 4
    for v in store.versions("t"):
        store.load("t", v)


def test_a_single_value_over_the_limit_is_refused_and_nothing_is_written(root):
    store = Store(root, max_file_bytes=LIMIT)
    store.create(checkpoint("t", steps=2))
    before = sorted(os.listdir(os.path.join(store.task_dir("t"), "versions")))
    cp = store.load("t")
    with pytest.raises(WriteLimitError) as err:
        store.save("t", 1, without_version(cp), results={"s1": "x" * LIMIT})
    assert err.value.limit == "file-size"
    message = str(err.value)
    assert f"over the {LIMIT}-byte limit" in message and 'the result of step "s1"' in message and "nothing was written" in message
    assert sorted(os.listdir(os.path.join(store.task_dir("t"), "versions"))) == before
    assert store.load("t")["version"] == 1


def test_a_value_nested_deeper_than_readers_parse_is_refused_before_anything_is_written(root):
    store = Store(root)
    store.create(checkpoint("t", steps=2))
    cp = store.load("t")
    with pytest.raises(WriteLimitError) as err:
        store.save("t", 1, without_version(cp), results={"s0": nested(MAX_VALUE_DEPTH + 1)})
    assert err.value.limit == "depth" and 'the result of step "s0"' in str(err.value)
    # As deep as a value may nest is saved.
    store.save("t", 1, without_version(cp), results={"s0": nested(MAX_VALUE_DEPTH)})
    assert store.read_blob("t", store.load("t")["plan"][0]["result_ref"]) == nested(MAX_VALUE_DEPTH)


def test_depth_is_measured_without_recursion():
    assert nests_within(nested(500), 500) and not nests_within(nested(501), 500)
    assert not nests_within(nested(100_000), 500)
    assert nests_within({"a": [1, {"b": ()}]}, 4) and not nests_within({"a": [1, {"b": ()}]}, 3)


@pytest.fixture
def small_files(monkeypatch):
    """Readers and writers that load 1 MiB of a file: the 64 MiB rules at a size a test writes quickly."""
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1024 * 1024)
    return 1024 * 1024


def test_large_results_leave_the_task_readable(root, model, small_files):
    """Eight results of 160 KB each: under the lease they all went to one segment, over the limit no reader loads."""
    with waystation.task(root, "big", plan=[f"s{i}" for i in range(8)] + ["last"], model=model) as t:
        for i in range(8):
            t.step(f"s{i}", lambda i=i: chr(97 + i) * (small_files // 6))
        t.step("last", lambda: "small")
    store = Store(root)
    versions = os.path.join(store.task_dir("big"), "versions")
    assert all(os.path.getsize(os.path.join(versions, n)) <= small_files for n in os.listdir(versions))
    cp = store.load("big")
    assert cp["status"] == "done"
    assert [len(store.read_blob("big", s["result_ref"])) for s in cp["plan"]] == [small_files // 6] * 8 + [5]


def test_a_step_whose_result_is_over_the_limit_fails_naming_the_step_and_the_limit(root, model, small_files):
    with pytest.raises(StepFailed) as err:
        with waystation.task(root, "huge", plan=["a", "b"], model=model) as t:
            t.step("a", lambda: "x" * small_files)
    message = str(err.value)
    assert 'the result of step "a"' in message and f"{small_files}-byte limit" in message and "nothing was written" in message
    cp = Store(root).load("huge")
    assert cp["status"] == "failed" and cp["plan"][0]["status"] == "failed" and cp["plan"][0].get("result_ref") is None
    assert cp["plan"][0]["error"]["kind"] == "invalid-checkpoint"


@pytest.mark.parametrize("depth", [MAX_VALUE_DEPTH + 1, 2_000])
def test_a_step_whose_result_nests_too_deep_fails_and_its_state_is_consistent(root, model, depth):
    with pytest.raises(StepFailed, match=f"nested more than {MAX_VALUE_DEPTH} levels deep"):
        with waystation.task(root, "deep", plan=["a"], model=model) as t:
            t.step("a", lambda: nested(depth))
    cp = Store(root).load("deep")
    assert cp["status"] == "failed" and cp["plan"][0]["status"] == "failed"
    assert cp["plan"][0]["error"]["kind"] == "invalid-checkpoint"


def test_a_result_as_deep_as_readers_allow_is_saved(root, model):
    with waystation.task(root, "deep", plan=["a"], model=model) as t:
        t.step("a", lambda: nested(MAX_VALUE_DEPTH))
    cp = Store(root).load("deep")
    assert cp["status"] == "done" and Store(root).read_blob("deep", cp["plan"][0]["result_ref"]) == nested(MAX_VALUE_DEPTH)


@pytest.mark.parametrize("depth, stored", [(MAX_VALUE_DEPTH - 3, True), (MAX_VALUE_DEPTH - 2, False), (2_000, False)])
def test_an_effect_outcome_nested_near_the_limit_is_stored_or_the_effect_kept_done(root, model, depth, stored):
    """The outcome sits three levels into the checkpoint (side_effects, its entry, outcome): so deep it fits, no deeper."""
    with pytest.raises(StepFailed) if not stored else contextlib.nullcontext():
        with waystation.task(root, "fx", plan=["a"], model=model) as t:
            t.step("a", lambda: t.effect("x", "fx:x", lambda key: nested(depth)) and 1)
    cp = Store(root).load("fx")
    assert cp["side_effects"][0]["status"] == "done"
    assert cp["status"] == ("done" if stored else "failed") and cp["plan"][0]["status"] == cp["status"]
    assert (cp["side_effects"][0]["outcome"] == nested(depth)) if stored else cp["side_effects"][0]["outcome"] is None

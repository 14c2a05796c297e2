"""The store: versions (full and delta), segments under the lease, torn tails, blobs, events, refusals."""

from __future__ import annotations

import hashlib
import json
import os
import zlib

import pytest
from helpers import checkpoint, without_version
from hypothesis import given, settings
from hypothesis import strategies as st

from waystation import ConflictError, SchemaError, Store, TaskNotFoundError, TaskReadError, acquire_lease, checkpoint_schema, validate
from waystation.records import SEGMENT_VERSIONS, parse_segment, version_file_name
from waystation.store import HOT_FILE
from waystation.compression import STORED_HEAD_BYTES, inflated, is_compressed

from conftest import REPO


def vpath(root, task, v):
    return os.path.join(root, task, "versions", version_file_name(v))


def save_steps(store, task_id, n, lease=None, payload=""):
    cp = store.load(task_id)
    for i in range(n):
        nxt = without_version(cp)
        nxt["phase"] = f"p{cp['version'] + 1}"
        nxt["goal"] = payload + str(i)
        cp = store.save(task_id, cp["version"], nxt, lease=lease)
    return cp


def test_the_bundled_schema_is_the_published_one():
    with open(os.path.join(REPO, "docs", "checkpoint.schema.json"), encoding="utf-8") as f:
        assert checkpoint_schema() == json.load(f)


def test_create_then_load_round_trips(root):
    store = Store(root)
    created = store.create(checkpoint("t1"), results={"s0": {"a": [1, 2.5, "é"]}}, append_history=[{"role": "user", "content": "hi"}])
    assert created["version"] == 1
    loaded = store.load("t1")
    assert loaded == created
    assert store.read_blob("t1", loaded["plan"][0]["result_ref"]) == {"a": [1, 2.5, "é"]}
    assert store.read_history("t1") == [{"role": "user", "content": "hi"}]
    assert loaded["plan"][0]["result_ref"].endswith("@1")
    assert validate(loaded, checkpoint_schema()) == []
    with open(vpath(root, "t1", 1), "rb") as f:
        first = f.readline()
    assert first.startswith(b'{"format":"waystation-version","version":1,"kind":"full","checkpoint":')


def test_saves_without_the_lease_write_a_file_each_and_deltas_until_a_keyframe(root):
    store = Store(root)
    store.create(checkpoint("t1"))
    save_steps(store, "t1", 30, payload="x" * 50)
    names = sorted(os.listdir(os.path.join(root, "t1", "versions")))
    assert names == [version_file_name(v) for v in range(1, 32)]
    kinds = [json.loads(open(vpath(root, "t1", v), "rb").readline())["kind"] for v in range(1, 32)]
    assert kinds[0] == "full" and "delta" in kinds and kinds.count("full") > 1
    fresh = Store(root)
    for v in (5, 17, 31):
        assert fresh.load("t1", v)["goal"] == "x" * 50 + str(v - 2)
    with open(os.path.join(root, "t1", HOT_FILE), "rb") as f:
        assert json.load(f)["version"] == 31


def test_saves_under_the_lease_append_to_segments_of_sixteen_and_settle_brings_the_hot_snapshot_up(root):
    store = Store(root)
    store.create(checkpoint("t1"))
    lease = acquire_lease(os.path.join(root, "t1"), "t1")
    try:
        save_steps(store, "t1", 20, lease=lease)
        names = sorted(os.listdir(os.path.join(root, "t1", "versions")))
        assert names == [version_file_name(1), version_file_name(2), version_file_name(18)]
        # The full segment was compressed when it filled; as written, it holds its sixteen sealed records.
        packed = open(vpath(root, "t1", 2), "rb").read()
        assert is_compressed(packed) and not is_compressed(open(vpath(root, "t1", 18), "rb").read())
        seg = parse_segment(inflated(packed, "2"), 2)
        assert [r.version for r in seg.records] == list(range(2, 2 + SEGMENT_VERSIONS)) and seg.tail == "clean"
        # The hot snapshot lags the open segment (version 17, the last of the full one) until the lease is let go.
        assert json.load(open(os.path.join(root, "t1", HOT_FILE)))["version"] == 17
        assert Store(root).load("t1")["version"] == 21
        store.settle("t1")
        assert json.load(open(os.path.join(root, "t1", HOT_FILE)))["version"] == 21
    finally:
        lease.release()


def test_a_compressed_segment_reads_back_and_a_damaged_one_is_named(root):
    store = Store(root)
    store.create(checkpoint("t1"))
    lease = acquire_lease(os.path.join(root, "t1"), "t1")
    try:
        saved = {v: store.load("t1", v) for v in [1]}
        cp = store.load("t1")
        for _ in range(20):
            nxt = without_version(cp)
            nxt["phase"] = f"p{cp['version'] + 1}"
            cp = store.save("t1", cp["version"], nxt, lease=lease)
            saved[cp["version"]] = cp
        store.settle("t1")
    finally:
        lease.release()
    packed = open(vpath(root, "t1", 2), "rb").read()
    assert is_compressed(packed) and len(packed) * 3 < len(inflated(packed, "2"))
    # The stream opens with a stored block holding the segment's first bytes as written: its head reads as it is.
    kept = STORED_HEAD_BYTES
    assert packed[10] & 0x06 == 0 and int.from_bytes(packed[11:13], "little") == kept
    assert packed[15 : 15 + kept] == inflated(packed, "2")[:kept]
    assert zlib.decompress(packed, 31) == inflated(packed, "2")
    fresh = Store(root)
    for v, cp in saved.items():
        assert fresh.load("t1", v) == cp
    damaged = bytearray(packed)
    damaged[len(damaged) // 2] ^= 0xFF
    open(vpath(root, "t1", 2), "wb").write(bytes(damaged))
    with pytest.raises(TaskReadError, match=r"00000002\.json: a compressed segment that does not inflate"):
        Store(root).load("t1", 5)
    assert Store(root).load("t1", 20)["version"] == 20


def test_the_history_index_places_every_chunk_a_writer_saved_at_bytes_that_hash_to_its_name(root):
    store = Store(root)
    store.create(checkpoint("t1"), append_history=[{"role": "user", "content": "m1"}])
    lease = acquire_lease(os.path.join(root, "t1"), "t1")
    cp = store.load("t1")
    try:
        # Under the lease (segments), then without it (files of their own, 16 chunks a line): 40 chunks in all.
        for i in range(2, 42):
            nxt = without_version(cp)
            nxt["phase"] = f"p{i}"
            cp = store.save("t1", cp["version"], nxt, results={"s0": {"n": i}}, append_history=[{"role": "assistant", "content": f"m{i}"}], lease=lease if i < 30 else None)
        store.settle("t1")
    finally:
        lease.release()
    index = os.path.join(root, "t1", "versions", "history-index.jsonl")
    lines = [json.loads(line) for line in open(index, encoding="utf-8")]
    assert all(line["history-index"] == 1 for line in lines)
    places = {}
    for line in lines:
        ref = line["head"]
        for f, start, end in reversed(line["chunks"]):
            data = inflated(open(vpath(root, "t1", f), "rb").read(), str(f))[start:end]
            assert hashlib.sha256(data).hexdigest() == ref[len("sha256:") : ref.index("@")]
            places[ref] = (f, start, end)
            ref = json.loads(data)["prev"]
    # Every chunk, version 1's included, is placed, the newest last.
    assert len(places) == 41 and lines[-1]["head"] == cp["history"]["head"]
    assert [m["content"] for m in store.read_history("t1")] == [f"m{i}" for i in range(1, 42)]


def test_a_torn_tail_is_ignored_and_the_next_save_is_a_file_of_its_own(root):
    store = Store(root)
    store.create(checkpoint("t1"))
    lease = acquire_lease(os.path.join(root, "t1"), "t1")
    save_steps(store, "t1", 4, lease=lease)  # versions 2..5 in the segment of 2
    lease.release()
    path = vpath(root, "t1", 2)
    data = open(path, "rb").read()
    seg = parse_segment(data, 2)
    cut = seg.records[-1].start + 30  # version 5's record cut short, as by a power cut
    with open(path, "r+b") as f:
        f.truncate(cut)
    reread = Store(root)
    assert parse_segment(open(path, "rb").read(), 2).tail == "torn"
    os.remove(os.path.join(root, "t1", HOT_FILE))
    assert reread.load("t1")["version"] == 4
    cp = save_steps(reread, "t1", 1)
    assert cp["version"] == 5 and os.path.exists(vpath(root, "t1", 5))
    assert Store(root).load("t1")["version"] == 5


def test_damage_after_a_record_stops_every_save(root):
    store = Store(root)
    store.create(checkpoint("t1"))
    lease = acquire_lease(os.path.join(root, "t1"), "t1")
    save_steps(store, "t1", 3, lease=lease)
    lease.release()
    path = vpath(root, "t1", 2)
    data = bytearray(open(path, "rb").read())
    seg = parse_segment(bytes(data), 2)
    second = seg.records[1]
    data[second.envelope_end - 3] ^= 0x01  # one byte of version 3 changed: its seal no longer matches
    open(path, "wb").write(bytes(data))
    os.remove(os.path.join(root, "t1", HOT_FILE))
    with pytest.raises(TaskReadError, match="damaged|hash to its seal"):
        save_steps(Store(root), "t1", 1)
    assert sorted(os.listdir(os.path.join(root, "t1", "versions"))) == [version_file_name(1), version_file_name(2)]


def test_two_writers_never_both_win_a_version(root):
    a, b = Store(root), Store(root)
    a.create(checkpoint("t1"))
    base = b.load("t1")
    save_steps(a, "t1", 1)
    with pytest.raises(ConflictError, match="version 2 was written by another writer first"):
        b.save("t1", base["version"], {**without_version(base), "phase": "loser"})
    assert Store(root).load("t1")["phase"] == "p2"
    assert not [n for n in os.listdir(os.path.join(root, "t1", "versions")) if n.endswith(".tmp")]


def test_a_create_over_an_existing_task_is_a_conflict(root):
    Store(root).create(checkpoint("t1"))
    with pytest.raises(ConflictError):
        Store(root).create(checkpoint("t1"))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"status": "exploded"}, "status: expected one of"),
        ({"total_steps": 9}, "total_steps is 9"),
        ({"schema_version": 2}, "schema_version must be 3"),
        ({"task_id": "other"}, "task_id is 'other'"),
        ({"plan": [{"id": "a", "name": "a", "status": "pending"}, {"id": "a", "name": "b", "status": "pending"}], "total_steps": 2}, 'plan step id "a" is used more than once'),
    ],
)
def test_a_checkpoint_that_does_not_fit_never_reaches_the_disk(root, change, message):
    store = Store(root)
    store.create(checkpoint("t1"))
    cp = store.load("t1")
    with pytest.raises(SchemaError, match=message):
        store.save("t1", 1, {**without_version(cp), **change})
    assert sorted(os.listdir(os.path.join(root, "t1", "versions"))) == [version_file_name(1)]


def test_results_for_unknown_steps_and_non_json_results_are_refused(root):
    store = Store(root)
    store.create(checkpoint("t1"))
    cp = without_version(store.load("t1"))
    with pytest.raises(SchemaError, match="not in the plan"):
        store.save("t1", 1, cp, results={"nope": 1})
    with pytest.raises(SchemaError, match="not JSON"):
        store.save("t1", 1, cp, results={"s0": object()})


def test_a_damaged_blob_or_hot_snapshot_is_reported_or_bypassed(root):
    store = Store(root)
    store.create(checkpoint("t1"), results={"s0": "value"})
    ref = store.load("t1")["plan"][0]["result_ref"]
    with open(os.path.join(root, "t1", HOT_FILE), "w") as f:
        f.write('{"torn": ')
    assert Store(root).load("t1")["version"] == 1  # the versions are the truth
    path = vpath(root, "t1", 1)
    data = open(path, "rb").read().replace(b'"value"', b'"valuE"')
    open(path, "wb").write(data)
    with pytest.raises(TaskReadError, match="missing or damaged"):
        Store(root).read_blob("t1", ref)
    with pytest.raises(TaskReadError, match="not a blob reference"):
        Store(root).read_blob("t1", "md5:1234")


def test_blob_files_of_other_writers_are_read_and_checked(root):
    import hashlib

    store = Store(root)
    store.create(checkpoint("t1"))
    data = b'{"x":1}'
    hexd = hashlib.sha256(data).hexdigest()
    os.makedirs(os.path.join(root, "t1", "blobs"))
    open(os.path.join(root, "t1", "blobs", hexd), "wb").write(data)
    assert store.read_blob("t1", f"sha256:{hexd}") == {"x": 1}
    open(os.path.join(root, "t1", "blobs", hexd), "wb").write(b'{"x":2}')
    with pytest.raises(TaskReadError, match="does not hash to its name"):
        store.read_blob("t1", f"sha256:{hexd}")


def test_missing_tasks_and_bad_ids_are_named(root):
    with pytest.raises(TaskNotFoundError):
        Store(root).load("nope")
    with pytest.raises(TaskReadError, match="cannot be a task id"):
        Store(root).load("../escape")
    with pytest.raises(TaskReadError, match="no version 9"):
        Store(root).create(checkpoint("t1")) and Store(root).load("t1", 9)


def test_events_count_up_and_a_torn_last_line_is_left_behind(root):
    store = Store(root)
    store.create(checkpoint("t1"))
    store.append_event("t1", {"type": "log", "data": {"message": "one"}})
    with open(os.path.join(root, "t1", "events.jsonl"), "a") as f:
        f.write('{"id":2,"type":"lo')  # a crash mid-append
    other = Store(root)
    other.append_event("t1", {"type": "log"})
    events = other.read_events("t1")
    assert [e["id"] for e in events] == [1, 2]
    assert all(e["task_id"] == "t1" and e["at"].endswith("Z") for e in events)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["phase", "goal", "resume_hint"]), st.text(max_size=30)), min_size=1, max_size=40), st.booleans())
def test_any_sequence_of_saves_reads_back_version_by_version(tmp_path_factory, changes, leased):
    root = str(tmp_path_factory.mktemp("prop"))
    store = Store(root)
    expected = [store.create(checkpoint("t1"))]
    lease = acquire_lease(os.path.join(root, "t1"), "t1") if leased else None
    try:
        for field, value in changes:
            cp = without_version(expected[-1])
            cp[field] = value
            expected.append(store.save("t1", expected[-1]["version"], cp, lease=lease))
    finally:
        store.settle("t1")
        if lease:
            lease.release()
    fresh = Store(root)
    assert fresh.newest_version("t1") == len(expected)
    for cp in expected:
        assert fresh.load("t1", cp["version"]) == cp

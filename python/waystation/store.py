"""The checkpoint directory, read and written as docs/FORMAT.md describes.

`Store(root)` reads any task (hot snapshot, versions, segments, blobs, the
history chain, events) and writes versions with the protocol of the
TypeScript store (electron/store/task-writer.ts): validate, temp file and
fsync, `link` as the commit point, fsync of `versions/`, and only then the
hot snapshot; under the task's lease, versions are appended to a segment
with one write and one fdatasync. A version, once written, is never
rewritten or deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Optional

from . import files
from .compression import compress_segment, inflated
from .errors import ConflictError, ReadOnlyTaskError, SchemaError, StoreWriteError, TaskNotFoundError, TaskReadError
from .jsonutil import DiffApplyError, apply_diff, canonical_json, compute_diff, dumps
from .records import (
    SEAL_MISMATCH,
    SEGMENT_VERSIONS,
    Blob,
    Segment,
    Span,
    encode_delta,
    encode_full,
    full_envelope_bytes,
    make_blob,
    parse_segment,
    parse_version_file_name,
    seal_matches,
    version_file_name,
    find_carried_blob,
)
from .schema import CURRENT_SCHEMA_VERSION, check_checkpoint, fill_defaults
from .write_limits import check_file_size, check_value_depth

if TYPE_CHECKING:
    from .lease import Lease

VERSIONS_DIR = "versions"
HISTORY_INDEX_FILE = "history-index.jsonl"
HOT_FILE = "checkpoint.json"
EVENTS_FILE = "events.jsonl"
BLOB_REF = re.compile(r"^sha256:([0-9a-f]{64})(?:@([1-9][0-9]{0,14}))?$")
TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
KEYFRAME_DELTA_RATIO = 2


def now_iso() -> str:
    """The current time as JavaScript's toISOString() writes it (UTC, milliseconds, Z)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def is_task_id(task_id: str) -> bool:
    """Whether `task_id` can name a task folder: letters, digits, `.`, `_`, `-`, not `.json`/`.tmp`."""
    return bool(TASK_ID.match(task_id)) and not task_id.endswith((".json", ".tmp"))


def migrate_forward(doc: dict[str, Any]) -> dict[str, Any]:
    """Bring a checkpoint of an older schema up to the current one, in memory (shared/checkpoint/migrate.ts)."""
    v = doc.get("schema_version")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise TaskReadError(f"schema_version must be a positive integer, got {json.dumps(v)}")
    if v > CURRENT_SCHEMA_VERSION:
        raise ReadOnlyTaskError(
            f"written by a newer Waystation (schema {v}; this library knows up to {CURRENT_SCHEMA_VERSION}): "
            "read-only, never rewritten"
        )
    if v == 1:
        rest = dict(doc)
        mode = rest.pop("mode", None)
        pending = rest.pop("pending_approval", None)
        plan = rest.get("plan") if isinstance(rest.get("plan"), list) else []
        status = (
            "waiting_approval"
            if pending is not None
            else "failed"
            if any(s.get("status") == "failed" for s in plan)
            else "done"
            if plan and all(s.get("status") in ("done", "skipped") for s in plan)
            else "running"
        )
        rest.setdefault("status", status)
        rest.setdefault("recovery", {"mode": mode or "manual", "pending_approval": pending, "decisions": [], "auto_attempts": 0})
        doc, v = rest, 2
    if v == 2:
        doc = {**doc, "schema_version": 3}
    return doc


def _parse_json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise TaskReadError(f"{what}: the bytes are not UTF-8") from None
    except (ValueError, RecursionError) as err:
        raise TaskReadError(f"{what}: not JSON ({err})") from None


@dataclass
class Envelope:
    """One version's envelope, and the record its carried blobs are in."""

    doc: dict[str, Any]
    envelope_len: int
    record: bytes


class _Reader:
    """Reads one task folder; keeps the version file read last, since a walk reads a segment's versions in turn."""

    def __init__(self, task_dir: str, rel: str, max_bytes: int) -> None:
        self.task_dir = task_dir
        self.rel = rel
        self.max_bytes = max_bytes
        self._memo: Optional[tuple[str, bytes, Segment]] = None

    def path(self, version: int) -> str:
        return os.path.join(self.task_dir, VERSIONS_DIR, version_file_name(version))

    def exists(self, version: int) -> bool:
        return os.path.lexists(self.path(version))

    def _segment(self, version: int) -> Optional[tuple[bytes, Segment]]:
        abs_path = self.path(version)
        if self._memo and self._memo[0] == abs_path:
            return self._memo[1], self._memo[2]
        try:
            data = files.read_bytes(abs_path, self.max_bytes)
        except OSError as err:
            raise TaskReadError(f"{self.rel}/versions/{version_file_name(version)}: cannot be read ({err.strerror or err})") from None
        if data is None:
            return None
        data = inflated(data, f"{self.rel}/versions/{version_file_name(version)}", self.max_bytes)
        seg = parse_segment(data, version, verify=False)
        self._memo = (abs_path, data, seg)
        return data, seg

    def locate(self, version: int) -> Optional[tuple[bytes, Span, int]]:
        """Version `version`'s record: (the file's bytes, its span, the version the file is named for); None when absent."""
        own = self._segment(version)
        if own is not None:
            data, seg = own
            if not seg.records:
                raise TaskReadError(f"{self.rel}/versions/{version_file_name(version)}: version {version}: {seg.tail_reason}")
            return data, seg.records[0], version
        for f in range(version - 1, max(1, version - SEGMENT_VERSIONS + 1) - 1, -1):
            if not self.exists(f):
                continue
            found = self._segment(f)
            if found is None:
                return None
            data, seg = found
            for span in seg.records:
                if span.version == version:
                    return data, span, f
            if seg.tail != "clean" and seg.tail_version is not None and seg.tail_version <= version and seg.tail == "damaged":
                raise TaskReadError(f"{self.rel}/versions/{version_file_name(f)}: version {seg.tail_version}: {seg.tail_reason}")
            return None
        return None

    def envelope(self, version: int) -> Envelope:
        """Read and check version `version`'s envelope."""
        found = self.locate(version)
        name = f"{self.rel}/versions/{version_file_name(version)}"
        if found is None:
            raise TaskReadError(f"{name}: version {version} does not exist")
        data, span, first = found
        name = f"{self.rel}/versions/{version_file_name(first)}"
        record = data[span.start : span.end]
        if span.envelope_end is None:
            eol = data.find(b"\n")
            doc: Any = None
            env_len = len(data)
            if 0 <= eol < len(data) - 1:
                try:
                    doc = json.loads(data[:eol].decode("utf-8"))
                    env_len = eol
                except (ValueError, UnicodeDecodeError):
                    doc = None
            if doc is None:
                doc = _parse_json(data, name)
                env_len = len(data)
        else:
            if not seal_matches(data, span):
                raise TaskReadError(f"{name}: version {version}: {SEAL_MISMATCH}")
            doc = _parse_json(data[span.start : span.envelope_end], name)
            env_len = span.envelope_end - span.start
        if not isinstance(doc, dict) or doc.get("format") != "waystation-version":
            raise TaskReadError(f"{name}: not a version envelope")
        if doc.get("version") != version:
            raise TaskReadError(f"{name}: the record is named for version {version} but holds version {doc.get('version')!r}")
        kind = doc.get("kind")
        if kind == "full" and not isinstance(doc.get("checkpoint"), dict):
            raise TaskReadError(f"{name}: not a version envelope: checkpoint: expected an object")
        if kind == "delta" and (doc.get("base") != version - 1 or not isinstance(doc.get("ops"), list)):
            raise TaskReadError(f"{name}: not a version envelope: a delta needs base {version - 1} and a list of ops")
        if kind not in ("full", "delta"):
            raise TaskReadError(f'{name}: not a version envelope: kind: expected "full" or "delta", got {kind!r}')
        return Envelope(doc, env_len, record)

    def rebuild(self, version: int) -> tuple[dict[str, Any], int, int]:
        """Version `version`'s checkpoint JSON (before migration), the last full snapshot's bytes, the delta bytes since."""
        deltas: list[tuple[int, list[Any]]] = []
        delta_bytes = 0
        for v in range(version, 0, -1):
            env = self.envelope(v)
            if env.doc["kind"] == "full":
                doc = env.doc["checkpoint"]
                for dv, ops in reversed(deltas):
                    try:
                        doc = apply_diff(doc, ops)
                    except DiffApplyError as err:
                        raise TaskReadError(f"{self.rel}/versions/{version_file_name(dv)}: the delta does not fit version {dv - 1}: {err}") from None
                return doc, env.envelope_len, delta_bytes
            deltas.append((v, env.doc["ops"]))
            delta_bytes += env.envelope_len
        raise TaskReadError(f"{self.rel}/versions/{version_file_name(1)}: version 1 is not a full snapshot")

    def version_numbers(self) -> list[int]:
        """The versions whose files exist, from the names (segments' appended versions not included)."""
        try:
            names = os.listdir(os.path.join(self.task_dir, VERSIONS_DIR))
        except FileNotFoundError:
            return []
        return sorted(n for n in (parse_version_file_name(x) for x in names) if n is not None)

    def newest_after(self, start: int) -> int:
        """The newest version, looking from `start` on: each next file name, then the records appended after it."""
        v = start
        while True:
            if self.exists(v + 1):
                v += 1
                continue
            found = self.locate(v + 1) if v > 0 else None
            if found is None:
                return v
            v += 1

    def tail_of(self, version: int) -> Optional[Segment]:
        """The parsed file that holds `version` (for its tail)."""
        for f in range(version, max(1, version - SEGMENT_VERSIONS + 1) - 1, -1):
            if self.exists(f):
                found = self._segment(f)
                return found[1] if found else None
        return None


class Store:
    """A checkpoint directory. Thread-safe for one process; see `Lease` for several.

    `max_file_bytes` is the most its readers load of one file, and so the most its writers put in one
    (files.MAX_FILE_BYTES, 64 MiB, as the TypeScript store's default).
    """

    def __init__(self, root: str, max_file_bytes: Optional[int] = None) -> None:
        self.root = os.path.abspath(root)
        self.max_file_bytes = files.MAX_FILE_BYTES if max_file_bytes is None else max_file_bytes
        self._writers: dict[str, TaskWriter] = {}
        self._events: dict[str, tuple[int, bool, int, int]] = {}
        self._lock = threading.RLock()

    # ---- reading --------------------------------------------------------------------------

    def task_dir(self, task_id: str) -> str:
        if not is_task_id(task_id):
            raise TaskReadError(f'"{task_id}" cannot be a task id: use letters, digits, ".", "_" and "-", starting with a letter or digit')
        return os.path.join(self.root, task_id)

    def _reader(self, task_id: str) -> _Reader:
        return _Reader(self.task_dir(task_id), task_id, self.max_file_bytes)

    def exists(self, task_id: str) -> bool:
        """Whether a Waystation task folder with versions exists for `task_id`."""
        return os.path.isdir(os.path.join(self.task_dir(task_id), VERSIONS_DIR))

    def list_tasks(self) -> list[str]:
        """The ids of the Waystation task folders of the directory, sorted."""
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            return []
        return sorted(n for n in names if is_task_id(n) and not files.is_temp_name(n) and os.path.isdir(os.path.join(self.root, n, VERSIONS_DIR)))

    def newest_version(self, task_id: str) -> int:
        """The task's newest version number (0 when it has none)."""
        reader = self._reader(task_id)
        start = 0
        hot = self._hot(task_id)
        if hot is not None and isinstance(hot.get("version"), int) and hot["version"] > 0:
            try:
                if reader.locate(hot["version"]) is not None:
                    start = hot["version"]
            except TaskReadError:
                start = 0
        if start == 0:
            numbers = reader.version_numbers()
            start = numbers[-1] if numbers else 0
        return reader.newest_after(start)

    def _hot(self, task_id: str) -> Optional[dict[str, Any]]:
        try:
            data = files.read_bytes(os.path.join(self.task_dir(task_id), HOT_FILE), self.max_file_bytes)
        except OSError:
            return None
        if data is None:
            return None
        try:
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        return doc if isinstance(doc, dict) else None

    def load(self, task_id: str, version: Optional[int] = None) -> dict[str, Any]:
        """The task's checkpoint at `version` (default: the newest), migrated and with defaults filled."""
        if not self.exists(task_id):
            raise TaskNotFoundError(f"there is no task {task_id!r} in {self.root}")
        newest = self.newest_version(task_id)
        if newest == 0:
            raise TaskReadError(f"{task_id}: the task has no readable version")
        v = newest if version is None else version
        if v < 1 or v > newest:
            raise TaskReadError(f"{task_id}: there is no version {v} (the newest is {newest})")
        hot = self._hot(task_id) if version is None else None
        doc = hot if hot is not None and hot.get("version") == v else self._reader(task_id).rebuild(v)[0]
        return fill_defaults(migrate_forward(doc))

    def versions(self, task_id: str) -> list[int]:
        """Every version number of the task, oldest first."""
        return list(range(1, self.newest_version(task_id) + 1))

    def read_blob(self, task_id: str, ref: str) -> Any:
        """The value a blob reference names, checked against its hash."""
        m = BLOB_REF.match(ref or "")
        if not m:
            raise TaskReadError(f"{task_id}: {ref!r} is not a blob reference")
        hex_digest, carried = m.group(1), m.group(2)
        if carried:
            env = self._reader(task_id).envelope(int(carried))
            line = find_carried_blob(env.record, env.envelope_len, hex_digest)
            if line is None:
                raise TaskReadError(f"{task_id}: blob {hex_digest[:12]}… is not among the lines of version {carried}: it is missing or damaged")
            return json.loads(line.decode("utf-8"))
        try:
            data = files.read_bytes(os.path.join(self.task_dir(task_id), "blobs", hex_digest), self.max_file_bytes)
        except OSError as err:
            raise TaskReadError(f"{task_id}: blob file blobs/{hex_digest} cannot be read ({err.strerror or err})") from None
        if data is None:
            raise TaskReadError(f"{task_id}: blob file blobs/{hex_digest} is missing")
        if hashlib.sha256(data).hexdigest() != hex_digest:
            raise TaskReadError(f"{task_id}: blob file blobs/{hex_digest} does not hash to its name: it is damaged")
        return json.loads(data.decode("utf-8"))

    def read_history(self, task_id: str, checkpoint: Optional[dict[str, Any]] = None) -> list[dict[str, Any]]:
        """The task's message history, oldest first (following the chain of chunks)."""
        cp = checkpoint or self.load(task_id)
        head = (cp.get("history") or {}).get("head")
        chunks: list[list[dict[str, Any]]] = []
        seen = set()
        while head:
            if head in seen:
                raise TaskReadError(f"{task_id}: the history chain loops at {head}")
            seen.add(head)
            chunk = self.read_blob(task_id, head)
            chunks.append(chunk.get("messages", []))
            head = chunk.get("prev")
        out: list[dict[str, Any]] = []
        for c in reversed(chunks):
            out.extend(c)
        return out

    def read_events(self, task_id: str, after_id: int = 0) -> list[dict[str, Any]]:
        """The task's events with an id above `after_id` (torn and unparsable lines skipped)."""
        path = os.path.join(self.task_dir(task_id), EVENTS_FILE)
        data = files.read_bytes(path) or b""
        return [e for e in _parse_events(data)[0] if e["id"] > after_id]

    # ---- writing --------------------------------------------------------------------------

    def writer(self, task_id: str) -> "TaskWriter":
        with self._lock:
            w = self._writers.get(task_id)
            if w is None:
                w = TaskWriter(self, task_id)
                self._writers[task_id] = w
            return w

    def create(self, checkpoint: dict[str, Any], results: Optional[dict[str, Any]] = None, append_history: Optional[list[dict[str, Any]]] = None) -> dict[str, Any]:
        """Write version 1 of a new task; ConflictError when it exists."""
        return self.writer(checkpoint["task_id"]).create(checkpoint, results, append_history)

    def save(
        self,
        task_id: str,
        expected_version: int,
        checkpoint: dict[str, Any],
        results: Optional[dict[str, Any]] = None,
        append_history: Optional[list[dict[str, Any]]] = None,
        lease: Optional["Lease"] = None,
    ) -> dict[str, Any]:
        """Write the version after `expected_version` and append its `version` event; returns the saved checkpoint."""
        cp = self.writer(task_id).save(expected_version, checkpoint, results, append_history, lease)
        try:
            self.append_event(task_id, {"type": "version", "version": cp["version"]})
        except OSError:
            pass  # the versions are the record; the log is a feed
        return cp

    def settle(self, task_id: str) -> None:
        """End the segment being appended to: checkpoint.json is brought up to the last version."""
        w = self._writers.get(task_id)
        if w is not None:
            w.settle()

    def append_event(self, task_id: str, event: dict[str, Any]) -> dict[str, Any]:
        """Append one event line to `events.jsonl` (not fsynced: the log is a feed, the versions the record)."""
        with self._lock:
            path = os.path.join(self.task_dir(task_id), EVENTS_FILE)
            try:
                st = os.stat(path)
                size, mtime = st.st_size, st.st_mtime_ns
            except FileNotFoundError:
                size, mtime = 0, 0
            state = self._events.get(task_id)
            if state is None or state[2] != size or state[3] != mtime:
                events, clean = _parse_events(files.read_bytes(path) or b"")
                state = (max((e["id"] for e in events), default=0), not clean, size, mtime)
            full = {"id": state[0] + 1, "task_id": task_id, **{k: v for k, v in event.items() if v is not None}}
            full.setdefault("at", now_iso())
            line = ("\n" if state[1] else "") + dumps(full) + "\n"
            data = line.encode("utf-8")
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            st = os.stat(path)
            if st.st_size == size + len(data):
                self._events[task_id] = (full["id"], False, st.st_size, st.st_mtime_ns)
            else:
                self._events.pop(task_id, None)
            return full


def _parse_events(data: bytes) -> tuple[list[dict[str, Any]], bool]:
    text = data.decode("utf-8", "replace")
    clean = text == "" or text.endswith("\n")
    lines = text.split("\n")
    lines.pop()
    out = []
    for line in lines:
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict) and isinstance(e.get("id"), int) and isinstance(e.get("type"), str):
            out.append(e)
    return out, clean


@dataclass
class _Segment:
    first: int
    fd: int
    size: int
    count: int


class TaskWriter:
    """Writes the versions of one task. Keeps the last version and its checkpoint, so a save never re-reads the history."""

    def __init__(self, store: Store, task_id: str) -> None:
        self.store = store
        self.task_id = task_id
        self.task_dir = store.task_dir(task_id)
        self._state: Optional[dict[str, Any]] = None
        self._segment: Optional[_Segment] = None
        self._lock = threading.RLock()
        self._index = _HistoryIndexWriter(os.path.join(self.task_dir, VERSIONS_DIR, HISTORY_INDEX_FILE))

    def _vpath(self, v: int) -> str:
        return os.path.join(self.task_dir, VERSIONS_DIR, version_file_name(v))

    def invalidate(self) -> None:
        """Forget the cached state: the next save derives it from disk and starts a file of its own."""
        self._state = None
        self._close_segment()
        self._index.flush()

    def _close_segment(self) -> None:
        seg, self._segment = self._segment, None
        if seg is not None:
            try:
                os.close(seg.fd)
            except OSError:
                pass

    def settle(self) -> None:
        """Close the segment and bring checkpoint.json up to the last version (when the lease is let go)."""
        with self._lock:
            self._index.flush()
            if self._segment is None:
                return
            self._close_segment()
            if self._state and self._state["base"] is not None:
                self._write_hot(dumps(self._state["base"]).encode("utf-8"))

    def last_version(self) -> int:
        return self._ensure()["last"]

    def _derive(self) -> dict[str, Any]:
        real = os.path.realpath(self.task_dir)
        if os.path.commonpath([real, os.path.realpath(self.store.root)]) != os.path.realpath(self.store.root):
            raise StoreWriteError(f"{self.task_id}: the task folder is a symlink to {real}, outside the checkpoint directory; nothing was written")
        newest = self.store.newest_version(self.task_id)
        if newest == 0:
            raise TaskReadError(f"{self.task_id}: the task has no versions to save after")
        reader = self.store._reader(self.task_id)
        seg = reader.tail_of(newest)
        if seg is not None and seg.tail == "damaged":
            raise TaskReadError(
                f"{self.task_id}: the file holding version {newest} is damaged after it ({seg.tail_reason}); "
                "nothing was written. Move the damaged file aside to continue."
            )
        try:
            doc, full_bytes, delta_bytes = reader.rebuild(newest)
        except TaskReadError as err:
            raise TaskReadError(f"{err}; a save must follow version {newest}, so nothing was written") from None
        read_only = None
        try:
            doc = migrate_forward(doc)
        except ReadOnlyTaskError as err:
            read_only = str(err)
        return {"last": newest, "base": doc, "full": full_bytes, "delta": delta_bytes, "read_only": read_only}

    def _ensure(self) -> dict[str, Any]:
        if self._state is None:
            self._state = self._derive()
        return self._state

    def create(self, checkpoint: dict[str, Any], results: Optional[dict[str, Any]], append_history: Optional[list[dict[str, Any]]]) -> dict[str, Any]:
        with self._lock:
            try:
                os.makedirs(self.store.root, exist_ok=True)
                os.makedirs(os.path.join(self.task_dir, VERSIONS_DIR), exist_ok=True)
                # A new name is durable only once its parent folder is.
                files.fsync_dir(self.task_dir)
                files.fsync_dir(self.store.root)
            except OSError as err:
                raise StoreWriteError(f"{self.task_id}: cannot create the task folder ({err.strerror or err}); nothing was written") from None
            if os.path.lexists(self._vpath(1)):
                raise ConflictError(self.task_id, 1)
            self._close_segment()
            self._state = {"last": 0, "base": None, "full": 0, "delta": 0, "read_only": None}
            return self._write(checkpoint, results, append_history, None)

    def save(self, expected: int, checkpoint: dict[str, Any], results: Optional[dict[str, Any]], append_history: Optional[list[dict[str, Any]]], lease: Optional["Lease"]) -> dict[str, Any]:
        with self._lock:
            state = self._ensure()
            if expected != state["last"]:
                self.invalidate()
                state = self._ensure()
            if state["read_only"]:
                raise ReadOnlyTaskError(f"{self.task_id}: {state['read_only']}; Waystation never writes over a newer schema")
            if expected < state["last"]:
                raise ConflictError(self.task_id, expected + 1)
            if expected > state["last"]:
                raise StoreWriteError(f"{self.task_id}: the task is at version {state['last']}, so there is no version {expected} to save after; nothing was written")
            return self._write(checkpoint, results, append_history, lease)

    def _build(
        self, checkpoint: dict[str, Any], results: Optional[dict[str, Any]], append_history: Optional[list[dict[str, Any]]], nxt: int
    ) -> tuple[dict[str, Any], list[Blob], dict[str, str]]:
        """The checkpoint to save, the blobs its version carries, and what each blob holds (by hash, for a refusal's message)."""
        state = self._state
        assert state is not None
        what = f"version {nxt} of {self.task_id}"
        # What a reader would refuse is never written (write_limits.py): checked before anything else, deep values first,
        # which also keeps the encoding below from recursing past Python's limit.
        check_value_depth(lambda: self._vname(nxt), checkpoint, results, append_history)
        try:
            doc = json.loads(dumps(checkpoint))
        except (TypeError, ValueError) as err:
            raise SchemaError(f"refusing to save {what}: {err}; nothing was written") from None
        doc["version"] = nxt
        if doc.get("task_id") != self.task_id:
            raise SchemaError(f"refusing to save {what}: task_id is {doc.get('task_id')!r}, not {self.task_id!r}; nothing was written")
        if doc.get("schema_version") != CURRENT_SCHEMA_VERSION:
            raise SchemaError(f"refusing to save {what}: schema_version must be {CURRENT_SCHEMA_VERSION}, got {doc.get('schema_version')!r}; nothing was written")
        blobs: list[Blob] = []
        labels: dict[str, str] = {}
        for step_id, value in (results or {}).items():
            plan = doc.get("plan")
            idx = next((i for i, s in enumerate(plan or []) if isinstance(s, dict) and s.get("id") == step_id), -1)
            if idx < 0:
                raise SchemaError(f"refusing to save {what}: a result was given for step {step_id!r}, which is not in the plan; nothing was written")
            try:
                blob = make_blob(canonical_json(value))
            except (TypeError, ValueError) as err:
                raise SchemaError(f"refusing to save {what}: the result of step {step_id} is not JSON ({err}); nothing was written") from None
            blobs.append(blob)
            labels.setdefault(blob.hex, f'the result of step "{step_id}"')
            plan[idx]["result_ref"] = blob.ref(nxt)
        base_history = (state["base"] or {}).get("history") or {"count": 0, "head": None}
        if append_history:
            for m in append_history:
                if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
                    raise SchemaError(f"refusing to save {what}: a history message needs a role and a content (strings); nothing was written")
            chunk = make_blob(canonical_json({"prev": base_history.get("head"), "messages": append_history}))
            blobs.append(chunk)
            labels.setdefault(chunk.hex, "the messages appended")
            doc["history"] = {"count": int(base_history.get("count", 0)) + len(append_history), "head": chunk.ref(nxt)}
        elif "history" not in doc:
            doc["history"] = dict(base_history)
        fill_defaults(doc)
        check_checkpoint(doc, what)
        seen: set[str] = set()
        unique = [b for b in blobs if not (b.hex in seen or seen.add(b.hex))]  # type: ignore[func-returns-value]
        return doc, unique, labels

    def _vname(self, v: int) -> str:
        return f"{self.task_id}/{VERSIONS_DIR}/{version_file_name(v)}"

    def _write(self, checkpoint: dict[str, Any], results: Optional[dict[str, Any]], append_history: Optional[list[dict[str, Any]]], lease: Optional["Lease"]) -> dict[str, Any]:
        state = self._state
        assert state is not None
        nxt = state["last"] + 1
        doc, blobs, labels = self._build(checkpoint, results, append_history, nxt)
        appendable = lease is not None and lease.held and lease.task_id == self.task_id
        seg = self._segment
        segment = seg if appendable and seg is not None and seg.first + seg.count == nxt else None
        doc_bytes = dumps(doc).encode("utf-8")
        full_len = full_envelope_bytes(nxt, len(doc_bytes))
        encoded: Optional[tuple[bytes, int]] = None
        if state["base"] is not None:
            delta = encode_delta(nxt, compute_diff(state["base"], doc), blobs, appendable)
            if state["delta"] + delta[1] < KEYFRAME_DELTA_RATIO * full_len:
                encoded = delta
        is_full = encoded is None
        if encoded is None:
            encoded = encode_full(nxt, doc_bytes, blobs, appendable)
        # Nothing a reader would refuse is written: a version over the limit for one file, or a hot snapshot over it.
        largest = max(blobs, key=lambda b: len(b.data), default=None)
        check_file_size(
            lambda: self._vname(nxt), len(encoded[0]), self.store.max_file_bytes, (labels.get(largest.hex, "a blob"), len(largest.data)) if largest else None
        )
        check_file_size(lambda: f"{self.task_id}/{HOT_FILE}", len(doc_bytes), self.store.max_file_bytes)
        # A segment stays within the size a reader loads: a version that would take it over starts a file of its own.
        if segment is not None and segment.size + len(encoded[0]) > self.store.max_file_bytes:
            segment = None
        if segment is None:
            self._close_segment()
        place = (segment.first, segment.size) if segment is not None else (nxt, 0)
        if segment is not None:
            self._append(segment, nxt, encoded[0], doc_bytes)
        else:
            self._commit(nxt, encoded[0], doc_bytes, appendable)
        # Committed: the history index may point readers at the chunk (docs/FORMAT.md, "The history index").
        chunk = _chunk_place(doc, state["base"], nxt, blobs, encoded[1], place)
        if chunk is not None:
            self._index.note(*chunk)
        if (appendable and self._segment is None) or self._index.pending >= SEGMENT_VERSIONS:
            self._index.flush()
        self._state = {
            "last": nxt,
            "base": doc,
            "full": full_len if is_full else state["full"],
            "delta": 0 if is_full else state["delta"] + encoded[1],
            "read_only": None,
        }
        return json.loads(doc_bytes)

    def _held_past(self, version: int) -> bool:
        """Whether the file holding `version` also holds a later one (a lease holder appended it)."""
        reader = self.store._reader(self.task_id)
        for f in range(version, max(1, version - SEGMENT_VERSIONS + 1) - 1, -1):
            if reader.exists(f):
                found = reader._segment(f)
                if not found:
                    return False
                recs = found[1].records
                return bool(recs) and recs[-1].version > version
        return False

    def _commit(self, nxt: int, data: bytes, doc_bytes: bytes, appendable: bool) -> None:
        vfile = self._vpath(nxt)
        hot = os.path.join(self.task_dir, HOT_FILE)
        hot_temp: Optional[str] = None
        try:
            vtemp = files.write_temp(vfile, data)
        except OSError as err:
            raise StoreWriteError(f"{self.task_id}: could not save version {nxt} ({err.strerror or err}); nothing was written and version {nxt - 1} is intact") from None
        try:
            if not appendable:
                hot_temp = files.write_temp(hot, doc_bytes, sync=False)
            won = not (nxt > 1 and self._held_past(nxt - 1))
            if won:
                won = files.commit_create(vtemp, vfile)  # the commit point
            else:
                files.remove_quietly(vtemp)
        except (OSError, TaskReadError) as err:
            files.remove_quietly(vtemp)
            if hot_temp:
                files.remove_quietly(hot_temp)
            raise StoreWriteError(f"{self.task_id}: could not save version {nxt} ({err}); nothing was written and version {nxt - 1} is intact") from None
        if not won:
            if hot_temp:
                files.remove_quietly(hot_temp)
            self.invalidate()
            raise ConflictError(self.task_id, nxt)
        # Saved; what follows makes it durable and brings the hot snapshot up to date.
        try:
            files.fsync_dir(os.path.dirname(vfile))
        except OSError:
            if hot_temp:
                files.remove_quietly(hot_temp)
            return
        if hot_temp:
            self._replace_hot(hot_temp)
        else:
            try:
                fd = os.open(vfile, os.O_RDWR)
                self._segment = _Segment(nxt, fd, len(data), 1)
            except OSError:
                self._write_hot(doc_bytes)

    def _append(self, seg: _Segment, nxt: int, data: bytes, doc_bytes: bytes) -> None:
        if os.path.lexists(self._vpath(nxt)):
            self.invalidate()
            raise ConflictError(self.task_id, nxt)
        try:
            written = os.pwrite(seg.fd, data, seg.size)
            if written != len(data):
                raise OSError(28, "short write")
            os.fdatasync(seg.fd)  # the commit point
        except OSError as err:
            try:
                os.ftruncate(seg.fd, seg.size)
                undone = True
            except OSError:
                undone = False
            self._close_segment()
            if undone:
                raise StoreWriteError(f"{self.task_id}: could not save version {nxt} ({err.strerror or err}); nothing was written and version {nxt - 1} is intact") from None
            raise StoreWriteError(
                f"{self.task_id}: could not save version {nxt} ({err.strerror or err}), and its bytes could not be taken back off the file: "
                f"readers may show version {nxt} until the next save, which writes it as a file of its own"
            ) from None
        seg.size += len(data)
        seg.count += 1
        if seg.count >= SEGMENT_VERSIONS:
            self._close_segment()
            compress_segment(self._vpath(seg.first), seg.size)
            self._write_hot(doc_bytes)

    def _write_hot(self, doc_bytes: bytes) -> None:
        try:
            temp = files.write_temp(os.path.join(self.task_dir, HOT_FILE), doc_bytes, sync=False)
        except OSError:
            return
        self._replace_hot(temp)

    def _replace_hot(self, temp: str) -> None:
        # Not fsynced: checkpoint.json is a view any reader rebuilds from the versions.
        hot = os.path.join(self.task_dir, HOT_FILE)
        try:
            files.remove_quietly(hot)
            files.commit_replace(temp, hot)
        except OSError:
            files.remove_quietly(temp)


def blob_refs(cp: dict[str, Any]) -> Iterable[str]:
    """Every blob reference a checkpoint holds (step results and the history head)."""
    for s in cp.get("plan", []):
        if s.get("result_ref"):
            yield s["result_ref"]
    head = (cp.get("history") or {}).get("head")
    if head:
        yield head


def _chunk_place(
    doc: dict[str, Any], base: Optional[dict[str, Any]], nxt: int, blobs: list[Blob], envelope_len: int, at: tuple[int, int]
) -> Optional[tuple[str, Optional[str], list[int]]]:
    """The history chunk version `nxt` introduced, its `prev`, and where it lies: [file, start, end]; None if it added none."""
    head = (doc.get("history") or {}).get("head")
    if not isinstance(head, str) or not head.endswith(f"@{nxt}"):
        return None
    hex_ = head[len("sha256:") : head.index("@")]
    start = envelope_len + 1
    for b in blobs:
        if b.hex == hex_:
            prev = ((base or {}).get("history") or {}).get("head")
            return head, prev if isinstance(prev, str) else None, [at[0], at[1] + start, at[1] + start + len(b.data)]
        start += len(b.data) + 1
    return None


class _HistoryIndexWriter:
    """The history index lines of the chunks saved since the last flush: a cache, appended without fsync."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: list[dict[str, Any]] = []
        self.pending = 0

    def note(self, ref: str, prev: Optional[str], place: list[int]) -> None:
        last = self.lines[-1] if self.lines else None
        if last is not None and prev is not None and last["head"] == prev:
            last["chunks"].append(place)
            last["head"] = ref
        else:
            self.lines.append({"history-index": 1, "head": ref, "chunks": [place]})
        self.pending += 1

    def flush(self) -> None:
        """Append the noted lines; a failure is not reported (readers find the chunks without the index)."""
        if not self.lines:
            return
        text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines)
        self.lines, self.pending = [], 0
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(text)
        except OSError:
            pass

"""Version files and segments: encoding records, finding them, sealing them.

A version file starts with its envelope on one line, followed by one line
per blob the version introduced. A file written under the task's lease is a
*segment*: sealed records of up to 16 consecutive versions, each followed by
`{"seal":N,"sha256":"<hex>"}`, the hash of the record's bytes
(docs/FORMAT.md, "Segments").
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from .jsonutil import dumps

SEGMENT_VERSIONS = 16
HEAD_BYTES = 96
_SEALED_HEAD = re.compile(rb'^\{"format":"waystation-version","version":(\d+),"kind":"(?:full|delta)","lines":(\d+),')
_SEAL_LINE = re.compile(rb'^\{"seal":(\d+),"sha256":"([0-9a-f]{64})"\}$')
SEAL_MISMATCH = "its bytes do not hash to its seal: they were changed after they were written"


def version_file_name(version: int) -> str:
    """`00000042.json` for version 42."""
    return f"{version:08d}.json"


def parse_version_file_name(name: str) -> Optional[int]:
    """The version a file name is for, or None for anything else (temp files included)."""
    m = re.fullmatch(r"(\d{8})\.json", name)
    if not m:
        return None
    n = int(m.group(1))
    return n if n > 0 else None


def record_head(version: int, kind: str, lines: Optional[int]) -> str:
    """The first bytes of an envelope, up to the field after `kind` (with `lines` for a sealed record)."""
    extra = "" if lines is None else f'"lines":{lines},'
    return f'{{"format":"waystation-version","version":{version},"kind":"{kind}",{extra}'


def seal_record(record: bytes, version: int) -> bytes:
    """`record` (every line ending in a line break) followed by its seal line."""
    digest = hashlib.sha256(record).hexdigest()
    return record + f'{{"seal":{version},"sha256":"{digest}"}}\n'.encode()


@dataclass
class Blob:
    """A blob a version carries: the hex SHA-256 of its canonical JSON, and those bytes."""

    hex: str
    data: bytes

    def ref(self, version: int) -> str:
        return f"sha256:{self.hex}@{version}"


def make_blob(canonical_text: str) -> Blob:
    data = canonical_text.encode("utf-8")
    return Blob(hashlib.sha256(data).hexdigest(), data)


def _with_blobs(envelope: bytes, blobs: list[Blob], seal_version: Optional[int]) -> tuple[bytes, int]:
    parts = [envelope]
    if blobs or seal_version is not None:
        for b in blobs:
            parts.append(b"\n")
            parts.append(b.data)
        parts.append(b"\n")
    record = b"".join(parts)
    return (record if seal_version is None else seal_record(record, seal_version)), len(envelope)


def encode_full(version: int, doc_bytes: bytes, blobs: list[Blob], sealed: bool) -> tuple[bytes, int]:
    """A full snapshot's bytes and its envelope's length."""
    head = record_head(version, "full", len(blobs) if sealed else None).encode()
    return _with_blobs(head + b'"checkpoint":' + doc_bytes + b"}", blobs, version if sealed else None)


def full_envelope_bytes(version: int, doc_len: int) -> int:
    """The length of the full envelope of `version` around a checkpoint of `doc_len` bytes."""
    return len(record_head(version, "full", None)) + len('"checkpoint":') + doc_len + 1


def encode_delta(version: int, ops: list[dict[str, Any]], blobs: list[Blob], sealed: bool) -> tuple[bytes, int]:
    """A delta's bytes (ops without `old` values) and its envelope's length."""
    slim = [{"op": o["op"], "path": o["path"]} if o["op"] == "remove" else {"op": o["op"], "path": o["path"], "value": o.get("value")} for o in ops]
    head = record_head(version, "delta", len(blobs) if sealed else None)
    env = f'{head}"base":{version - 1},"ops":{dumps(slim)}}}'.encode("utf-8")
    return _with_blobs(env, blobs, version if sealed else None)


@dataclass
class Span:
    """Where one version's record lies in its file."""

    version: int
    start: int
    #: The envelope line's end, or None when the envelope is not known to be one line (a file of one version).
    envelope_end: Optional[int]
    end: int
    seal: Optional[str]


@dataclass
class Segment:
    """What a version file holds: its records, and what follows the last one."""

    sealed: bool
    records: list[Span] = field(default_factory=list)
    tail: str = "clean"  # clean | torn | damaged
    tail_version: Optional[int] = None
    tail_reason: Optional[str] = None


def seal_matches(data: bytes, span: Span) -> bool:
    """True when a record's bytes hash to its seal (a record without one has nothing to check)."""
    return span.seal is None or hashlib.sha256(data[span.start : span.end]).hexdigest() == span.seal


def _prefix_of_head(rest: bytes, version: int) -> bool:
    expected = f'{{"format":"waystation-version","version":{version}'.encode()
    text = rest.rstrip(b"\0")
    return len(text) == 0 or expected.startswith(text[: len(expected)]) or text.startswith(expected)


def parse_segment(data: bytes, first: int, verify: bool = True) -> Segment:
    """The records of the version file named for version `first` (see docs/FORMAT.md, "Segments")."""
    if not _SEALED_HEAD.match(data[:HEAD_BYTES]):
        return Segment(False, [Span(first, 0, None, len(data), None)])
    seg = Segment(True)
    pos = 0
    version = first

    def bad(tail: str, reason: str) -> Segment:
        seg.tail, seg.tail_version, seg.tail_reason = tail, version, reason
        return seg

    while pos < len(data):
        if len(seg.records) == SEGMENT_VERSIONS:
            return bad("damaged", f"{len(data) - pos} bytes follow the {SEGMENT_VERSIONS}th version, the most a file holds")
        head = _SEALED_HEAD.match(data[pos : pos + HEAD_BYTES])
        eol = data.find(b"\n", pos)
        if not head:
            if eol < 0 and _prefix_of_head(data[pos:], version):
                return bad("torn", "its record was cut short")
            return bad("damaged", f"the bytes after version {version - 1} are not the sealed record of version {version}")
        if int(head.group(1)) != version:
            return bad("damaged", f"the record after version {version - 1} is named version {head.group(1).decode()}")
        if eol < 0:
            return bad("torn", "its record was cut short")
        end = eol + 1
        for _ in range(int(head.group(2))):
            nxt = data.find(b"\n", end)
            if nxt < 0:
                return bad("torn", "its record was cut short")
            end = nxt + 1
        seal_end = data.find(b"\n", end)
        if seal_end < 0:
            return bad("torn", "its record was cut short before its seal")
        seal = _SEAL_LINE.match(data[end:seal_end])
        if not seal or int(seal.group(1)) != version:
            return bad("damaged", "its seal line is not the seal of this version")
        span = Span(version, pos, eol, end, seal.group(2).decode())
        if verify and not seal_matches(data, span):
            return bad("damaged", SEAL_MISMATCH)
        seg.records.append(span)
        pos = seal_end + 1
        version += 1
    return seg


def find_carried_blob(record: bytes, envelope_len: int, hex_digest: str) -> Optional[bytes]:
    """The line after the envelope whose bytes hash to `hex_digest`, or None."""
    start = envelope_len + 1
    while start < len(record):
        end = record.find(b"\n", start)
        if end < 0:
            end = len(record)
        if end > start:
            line = record[start:end]
            if hashlib.sha256(line).hexdigest() == hex_digest:
                return line
        start = end + 1
    return None

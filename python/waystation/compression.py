"""Full segments kept compressed (docs/FORMAT.md, "Compressed segments").

A segment that holds its 16 versions is never written to again; the writer that
filled it replaces it by its gzip under the same name. A reader tells the two
forms apart by gzip's magic number (a version file otherwise begins with `{`)
and inflates the compressed one before anything else: every offset, seal and
hash is of the bytes as written. Inflating is capped at the reader's limit for
one file, so a small file cannot unpack into a large one.
"""

from __future__ import annotations

import struct
import zlib
from typing import Optional

from . import files
from .errors import TaskReadError

GZIP_MAGIC = b"\x1f\x8b"
#: How many of a segment's first bytes its gzip keeps as they are, in a stored block at the start of the
#: stream, so a reader that wants only the envelope's head reads it without inflating (as the TypeScript writer).
STORED_HEAD_BYTES = 256
#: gzip's header: deflate, no name, no time, Unix.
_GZIP_HEADER = bytes([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03])
#: The most a version file may hold once inflated: the readers' limit for one file.
MAX_INFLATED_BYTES = files.MAX_FILE_BYTES


def is_compressed(data: bytes) -> bool:
    return data[:2] == GZIP_MAGIC


def inflated(data: bytes, name: str, max_bytes: int = MAX_INFLATED_BYTES) -> bytes:
    """A version file's bytes as written: inflated when compressed, as they are otherwise.

    Raises TaskReadError, naming the file, when they do not inflate or inflate past `max_bytes`.
    """
    if not is_compressed(data):
        return data
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, max_bytes)
    except zlib.error as err:
        raise TaskReadError(f"{name}: a compressed segment that does not inflate ({err})") from None
    if inflater.unconsumed_tail:
        raise TaskReadError(f"{name}: a compressed segment that inflates past the {max_bytes}-byte limit for one file; not loaded")
    if not inflater.eof:
        raise TaskReadError(f"{name}: a compressed segment that ends early: a torn or partial write")
    return out


def compress_segment(path: str, size: int) -> Optional[str]:
    """Replace the full segment at `path` (`size` bytes, all the writer's records) by its gzip.

    Written to a temporary file, fsynced, and renamed over it, so a reader finds either form whole.
    A file that is not what the writer left is left alone, and a failure leaves the segment as it
    was: compression saves space, no save depends on it. Returns why it was not done, or None.
    """
    try:
        data = files.read_bytes(path)
    except OSError as err:
        return err.strerror or str(err)
    if data is None or len(data) != size or is_compressed(data):
        return "the segment is not as its writer left it"
    temp = None
    try:
        temp = files.write_temp(path, zlib_gzip(data), sync=True)
        files.commit_replace(temp, path)
    except OSError as err:
        if temp is not None:
            files.remove_quietly(temp)
        return err.strerror or str(err)
    return None


def zlib_gzip(data: bytes) -> bytes:
    """`data` in gzip's format as Waystation's TypeScript writer writes it (RFC 1952).

    The deflate stream opens with a stored block of the first STORED_HEAD_BYTES, then the rest
    deflated at level 6 from an empty window: one valid stream, which any gzip reader inflates to
    the same bytes, and whose head is readable as it is.
    """
    kept = min(STORED_HEAD_BYTES, len(data))
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    rest = packer.compress(data[kept:]) + packer.flush()
    stored = b"\x00" + struct.pack("<HH", kept, kept ^ 0xFFFF)
    trailer = struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    return _GZIP_HEADER + stored + data[:kept] + rest + trailer


"""Atomic, durable file operations (docs/FORMAT.md, "The write protocol").

A file is written to a temporary name beside its target (`.<name>.<random>.tmp`,
which readers skip), fsynced, and then put in place: with `link`, which fails
when the target exists (the commit point of a version: two writers never both
win), or with `rename`, which replaces it. The folder is fsynced after, so the
new name survives a power cut.
"""

from __future__ import annotations

import errno
import os
import secrets
from typing import Optional, Union

#: The most readers load of one file (the TypeScript store's default, DEFAULT_MAX_FILE_BYTES); writers stay under it.
MAX_FILE_BYTES = 64 * 1024 * 1024

_TOKEN = secrets.token_hex(6)
_count = 0


def is_temp_name(name: str) -> bool:
    """True for names of files a writer has not finished: readers skip them."""
    return name.startswith(".") or name.endswith(".tmp")


def fsync_dir(path: str) -> None:
    """fsync a folder, so the names created or renamed in it are durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_temp(target: str, data: Union[bytes, str], sync: bool = True) -> str:
    """Write `data` to a fresh temp file beside `target` (fsynced unless `sync` is False); return its path."""
    global _count
    _count += 1
    folder, name = os.path.split(target)
    temp = os.path.join(folder, f".{name}.{_TOKEN}{_count:x}.tmp")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        remove_quietly(temp)
        raise
    os.close(fd)
    return temp


def commit_create(temp: str, target: str) -> bool:
    """Link a synced temp file to `target` unless it exists (then False); the temp name is removed either way."""
    try:
        os.link(temp, target)
    except OSError as err:
        remove_quietly(temp)
        if err.errno == errno.EEXIST:
            return False
        raise
    remove_quietly(temp)
    return True


def commit_replace(temp: str, target: str) -> None:
    """Rename a temp file over `target`."""
    try:
        os.replace(temp, target)
    except BaseException:
        remove_quietly(temp)
        raise


def remove_quietly(path: str) -> None:
    """Remove a file, ignoring errors (a stale temp file is harmless)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def write_file_atomic(target: str, data: Union[bytes, str], create: bool = False) -> None:
    """Write a whole file atomically and durably; with `create`, refuse (FileExistsError) when it exists."""
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    temp = write_temp(target, data)
    if create:
        if not commit_create(temp, target):
            raise FileExistsError(errno.EEXIST, f"{target} already exists; it was left untouched", target)
    else:
        commit_replace(temp, target)
    fsync_dir(os.path.dirname(target) or ".")


def read_bytes(path: str, max_bytes: int = MAX_FILE_BYTES) -> Optional[bytes]:
    """A regular file's bytes, or None when it does not exist. Raises OSError for other failures."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        import stat as _stat

        if not _stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file", path)
        if st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{path} is larger than {max_bytes} bytes", path)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)

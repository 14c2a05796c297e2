"""What an agent hands the library, checked where it comes in.

A wrong type or form is refused at once with an ArgumentError that names the
call and the argument, before anything runs or is written, rather than
failing later, deeper in, as a raw Python error ("'str' object has no
attribute 'get'") that says nothing of what to change.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Union

from .errors import ArgumentError


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def require_str(value: Any, call: str, name: str, *, empty: bool = True) -> str:
    """`value` when it is a string (a non-empty one unless `empty`)."""
    if not isinstance(value, str):
        raise ArgumentError(f"{call}: {name} must be a string, got {_kind(value)}")
    if not empty and not value:
        raise ArgumentError(f"{call}: {name} must not be empty")
    return value


def require_callable(value: Any, call: str, name: str) -> Callable[..., Any]:
    """`value` when it can be called."""
    if not callable(value):
        raise ArgumentError(f"{call}: {name} must be a function, got {_kind(value)}")
    return value  # type: ignore[no-any-return]


def require_path(value: Any, call: str) -> str:
    """A file path (a string or an os.PathLike) as a string."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise ArgumentError(f"{call}: path must be a non-empty string (relative to the checkpoint directory, or absolute), got {_kind(value)}")
    return value


def require_content(value: Any, call: str) -> Union[str, bytes]:
    """A file's content: text, or bytes."""
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if not isinstance(value, (str, bytes)):
        raise ArgumentError(f"{call}: content must be str or bytes, got {_kind(value)}")
    return value


def require_messages(value: Any, call: str) -> list[dict[str, Any]]:
    """Chat messages: a list of dicts, each with a `role` and a `content`, both strings."""
    if not isinstance(value, (list, tuple)) or not value:
        raise ArgumentError(f'{call}: messages must be a non-empty list of {{"role": str, "content": str}} dicts, got {_kind(value)}')
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise ArgumentError(f'{call}: messages[{i}] must be a {{"role": str, "content": str}} dict, got {_kind(m)}')
        for key in ("role", "content"):
            if not isinstance(m.get(key), str):
                got = "none" if key not in m else _kind(m[key])
                raise ArgumentError(f'{call}: messages[{i}] needs "{key}" as a string, got {got}')
    return list(value)

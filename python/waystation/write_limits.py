"""The limits a store's readers apply, checked before anything is written (electron/store/write-limits.ts).

A reader refuses a file over the size limit for one file (64 MiB by default)
or nested more than MAX_JSON_DEPTH levels deep. A writer that accepted such a
value would write a version its own readers then refuse: the task would show
the version before, and every resume after would fail. So every save is
checked here first and refused with a WriteLimitError naming the limit, with
nothing written; the TypeScript writer refuses the same saves in the same
words.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from .errors import WriteLimitError

#: The deepest readers parse a file (electron/store/file-reader.ts).
MAX_JSON_DEPTH = 512
#: How many levels the files of a version add around a value: the envelope, the checkpoint, the plan and its step,
#: a blob list, a delta's operation.
ENVELOPE_DEPTH = 12
#: The deepest a value in a checkpoint, a step result or a message may nest.
MAX_VALUE_DEPTH = MAX_JSON_DEPTH - ENVELOPE_DEPTH


def nests_within(value: Any, limit: int) -> bool:
    """Whether a JSON-like value nests at most `limit` levels (lists, tuples and dicts; a scalar is 0).

    Walked with a stack, not by recursion, so a value too deep for Python's own recursion is measured too.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return True


def depth_refusal(what: str, file: str) -> WriteLimitError:
    """The refusal of a save because `what` nests deeper than readers accept; `file` is the version file it would write."""
    return WriteLimitError(
        f"{file}: refusing to save this version: {what} is nested more than {MAX_VALUE_DEPTH} levels deep, the most a "
        f"checkpoint value may nest (readers refuse files nested more than {MAX_JSON_DEPTH} levels); nothing was written "
        "and the task is unchanged",
        "depth",
    )


def check_value_depth(file: Callable[[], str], checkpoint: Any, results: Optional[dict[str, Any]], messages: Optional[list[Any]]) -> None:
    """Refuse a save whose values nest deeper than readers accept; `file` names the version file, for the message."""
    for step_id, value in (results or {}).items():
        if not nests_within(value, MAX_VALUE_DEPTH):
            raise depth_refusal(f'the result of step "{step_id}"', file())
    for i, m in enumerate(messages or []):
        if not nests_within(m, MAX_VALUE_DEPTH):
            raise depth_refusal(f"message {i + 1} of those appended", file())
    if not nests_within(checkpoint, MAX_VALUE_DEPTH):
        raise depth_refusal("the checkpoint", file())


def check_file_size(file: Callable[[], str], size: int, max_bytes: int, largest: Optional[tuple[str, int]] = None) -> None:
    """Refuse to write a file larger than readers load; `largest` names the value that takes most of it (what, bytes)."""
    if size <= max_bytes:
        return
    of_it = f" ({largest[0]} alone is {largest[1]} bytes)" if largest else ""
    raise WriteLimitError(
        f"{file()}: refusing to save this version: the file would be {size} bytes, over the {max_bytes}-byte limit "
        f"readers load for one file{of_it}; nothing was written and the task is unchanged. Keep large data in files of "
        "its own and record them as artifacts",
        "file-size",
    )

"""Keeping the folders a start's options name inside the checkpoint directory.

A task the inspector starts (a page, through the host) gets options a person
typed into a form, or anyone who holds the page's token sent. The host tells a
command agent so in its environment (WAYSTATION_OPTIONS_CONFINED=1), and the
library hands it to `resolve_options` as `env["confined"]`: an agent that reads
or writes the folders its options name resolves them with
`resolve_inside_root`, as the built-in md-summarizer does, so that `../`, an
absolute path elsewhere or a symbolic link out of the directory is refused
before anything is read. The same rule as the TypeScript runtime's
(electron/store/path-confinement.ts, resolveNamedInsideRoot).
"""

from __future__ import annotations

import os

from .errors import WaystationError

CONFINED_ENV = "WAYSTATION_OPTIONS_CONFINED"


class PathOutsideRoot(WaystationError, ValueError):
    """A folder an option names lies outside the checkpoint directory; nothing was read or written.

    A WaystationError like every error of the library, and a ValueError still, as it always was.
    """

    def __init__(self, requested: str, root: str, why: str) -> None:
        super().__init__(f"the path {requested[:200]!r} is refused: {why}; only paths inside {root} are allowed")
        self.requested = requested
        self.root = root
        self.why = why


def _within(root: str, candidate: str) -> bool:
    rel = os.path.relpath(candidate, root)
    return rel == "." or not (rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel))


def resolve_inside_root(root: str, requested: str) -> str:
    """`requested`, relative to `root` or absolute inside it, as a real absolute path inside the root.

    The part of the path that exists is resolved through its symbolic links, so a link leading out of the root is
    refused as surely as `..`; the part that does not exist yet is appended as it is (it cannot be a link).
    Raises PathOutsideRoot.
    """
    if "\0" in requested:
        raise PathOutsideRoot(requested, root, "it contains a NUL byte")
    real_root = os.path.realpath(root)
    if os.path.isabs(requested):
        under = next((r for r in (os.path.abspath(root), real_root) if _within(r, os.path.normpath(requested))), None)
        if under is None:
            raise PathOutsideRoot(requested, root, "it names a folder outside the directory")
        requested = os.path.relpath(os.path.normpath(requested), under)
    segments = [s for s in requested.replace("\\", "/").split("/") if s not in ("", ".")]
    if ".." in segments:
        raise PathOutsideRoot(requested, root, 'it climbs out with ".."')
    existing = os.path.join(real_root, *segments)
    missing: list[str] = []
    while not os.path.lexists(existing) and existing != real_root:
        missing.append(os.path.basename(existing))
        existing = os.path.dirname(existing)
    real = os.path.realpath(existing)
    if not _within(real_root, real):
        raise PathOutsideRoot(requested, root, "it leads outside through a symbolic link")
    return os.path.join(real, *reversed(missing))

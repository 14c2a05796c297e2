"""The task lease (docs/FORMAT.md, "The lease"): only its holder runs steps and writes versions.

`lease/<n>.json` entries form a sequence; the highest is the current state.
An entry is stale when released, when on this host its pid is dead or now
names a process with another start time, or, where the process cannot be
checked (another host, no start time, no /proc), when its heartbeat is older
than the time-to-live (30 s, or WAYSTATION_LEASE_TTL_MS). New entries are
created with `link`, so two runners never both win. This is the same rule as
electron/runtime/lease.ts, so a Python runner and a TypeScript one exclude
each other.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import threading
from datetime import datetime
from typing import Any, Callable, Optional

from . import files
from .errors import LeaseHeldError, LeaseLostError, LeaseReleasedError, TaskFolderGoneError

DEFAULT_LEASE_TTL_MS = 30_000
_ENTRY = re.compile(r"^(\d+)\.json$")
_STOP = re.compile(r"^(\d+)\.stop\.json$")


# Entries of the lease folder kept below the newest (_prune), and the most of an entry read back (an entry is ~200 bytes).
_KEPT_ENTRIES = 8
_ENTRY_BYTES = 64 * 1024


def lease_ttl_ms(env: Optional[dict[str, str]] = None) -> float:
    """WAYSTATION_LEASE_TTL_MS when it is a positive number, else 30 s."""
    raw = (env if env is not None else os.environ).get("WAYSTATION_LEASE_TTL_MS")
    try:
        n = float(raw) if raw is not None and raw.strip() else float("nan")
    except ValueError:
        n = float("nan")
    return n if n == n and n > 0 and n != float("inf") else DEFAULT_LEASE_TTL_MS


def pid_alive(pid: Any) -> bool:
    """Whether a process with this pid exists on this host (EPERM: it exists, not ours)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
        return True
    except PermissionError:
        return True
    except OSError:
        return False


_boot_id: Optional[str] = None


def _boot() -> str:
    global _boot_id
    if _boot_id is None:
        try:
            with open("/proc/sys/kernel/random/boot_id", encoding="utf-8") as f:
                _boot_id = f.read().strip()
        except OSError:
            _boot_id = ""
    return _boot_id


def process_start_token(pid: int) -> Optional[str]:
    """`<boot id>:<start ticks>` of process `pid` (Linux), telling it from a later process with the same pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split(" ")
    if len(fields) < 20 or not fields[19].isdigit():
        return None
    return f"{_boot()}:{fields[19]}"


def _iso() -> str:
    from .store import now_iso

    return now_iso()


def _parse_ts(value: Any) -> Optional[float]:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


def lease_is_live(entry: Optional[dict[str, Any]], ttl_ms: Optional[float] = None, now_ms: Optional[float] = None) -> bool:
    """Whether an entry still stands for a live holder (see the module's docstring)."""
    import time

    if not entry or entry.get("released"):
        return False
    if entry.get("hostname") == socket.gethostname():
        if not pid_alive(entry.get("pid")):
            return False
        if isinstance(entry.get("process_start"), str):
            current = process_start_token(entry["pid"])
            if current is not None:
                return current == entry["process_start"]
    beat = _parse_ts(entry.get("heartbeat_at"))
    ttl = lease_ttl_ms() if ttl_ms is None else ttl_ms
    now = time.time() * 1000 if now_ms is None else now_ms
    return beat is not None and now - beat <= ttl


def highest_entry(lease_dir: str) -> Optional[tuple[int, Optional[dict[str, Any]]]]:
    """The highest lease entry: (n, entry), the entry None when unreadable (damage: stale); None when there is none."""
    try:
        names = os.listdir(lease_dir)
    except FileNotFoundError:
        return None
    best = -1
    for name in names:
        m = _ENTRY.match(name)
        if m:
            best = max(best, int(m.group(1)))
    if best < 0:
        return None
    try:
        data = files.read_bytes(os.path.join(lease_dir, f"{best}.json"), max_bytes=_ENTRY_BYTES)
        entry = json.loads(data.decode("utf-8")) if data is not None else None
        return best, entry if isinstance(entry, dict) else None
    except (OSError, ValueError, UnicodeDecodeError):
        return best, None


def read_lease(task_dir: str) -> Optional[dict[str, Any]]:
    """The current lease entry of a task folder, or None when it was never leased."""
    found = highest_entry(os.path.join(task_dir, "lease"))
    return found[1] if found else None


def _stop_path(lease_dir: str, n: int) -> str:
    return os.path.join(lease_dir, f"{n}.stop.json")


def read_stop_request(lease_dir: str, n: int) -> Optional[dict[str, Any]]:
    """The stop request for lease entry `n` (`lease/<n>.stop.json`, docs/FORMAT.md), or None.

    ``{"by", "at", "reason"?, "count"}``; a request that cannot be read is still a request (stopping is
    the safe reading of it), with `by` "someone". The same rule as electron/store/stop-request.ts.
    """
    try:
        data: Optional[bytes] = files.read_bytes(_stop_path(lease_dir, n), max_bytes=64 * 1024)
        if data is None:
            return None
    except OSError:
        data = None
    fallback: dict[str, Any] = {"by": "someone", "at": "1970-01-01T00:00:00.000Z", "count": 1}
    try:
        parsed = json.loads(data.decode("utf-8")) if data is not None else None
    except (ValueError, UnicodeDecodeError):
        parsed = None
    if not isinstance(parsed, dict):
        return fallback
    request: dict[str, Any] = {
        "by": parsed["by"] if isinstance(parsed.get("by"), str) else fallback["by"],
        "at": parsed["at"] if isinstance(parsed.get("at"), str) else fallback["at"],
    }
    if isinstance(parsed.get("reason"), str):
        request["reason"] = parsed["reason"]
    count = parsed.get("count")
    request["count"] = count if isinstance(count, (int, float)) and not isinstance(count, bool) and count > 0 else 1
    return request


def write_stop_request(task_dir: str, n: int, by: str, reason: Optional[str] = None) -> dict[str, Any]:
    """Ask the holder of lease entry `n` to stop at its next step or effect; returns the request as written.

    Written whole (temp file and rename), so the holder reads a request or none; `count` says how often
    it was asked (above 1: end the process now).
    """
    lease_dir = os.path.join(task_dir, "lease")
    before = read_stop_request(lease_dir, n)
    request: dict[str, Any] = {"by": by, "at": _iso()}
    if reason:
        request["reason"] = reason
    request["count"] = int((before or {}).get("count", 0)) + 1
    target = _stop_path(lease_dir, n)
    files.commit_replace(files.write_temp(target, json.dumps(request, separators=(",", ":"), ensure_ascii=False) + "\n"), target)
    return request


def _write_exclusive(lease_dir: str, n: int, entry: dict[str, Any]) -> bool:
    target = os.path.join(lease_dir, f"{n}.json")
    return files.commit_create(files.write_temp(target, json.dumps(entry, separators=(",", ":")) + "\n"), target)


class Lease:
    """A held lease. Heartbeats in a daemon thread; `release()` writes the released entry after it."""

    def __init__(self, task_id: str, lease_dir: str, n: int, entry: dict[str, Any], ttl_ms: float, heartbeat_ms: Optional[float], on_lost: Optional[Callable[[LeaseLostError], None]]) -> None:
        self.task_id = task_id
        self.lease_dir = lease_dir
        self.n = n
        self.entry = entry
        self._ttl = ttl_ms
        self._every = ttl_ms / 3 if heartbeat_ms is None else heartbeat_ms
        self._on_lost = on_lost
        self._lost: Optional[LeaseLostError] = None
        self._releasing = False
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        st = os.stat(os.path.dirname(lease_dir))
        # The task folder as last seen to be the lease's: device, inode, change time (see _check_folder).
        self._folder: tuple[int, int, int] = (st.st_dev, st.st_ino, st.st_ctime_ns)

    @property
    def held(self) -> bool:
        """Neither lost to a takeover nor being released."""
        return self._lost is None and not self._releasing

    @property
    def lost(self) -> Optional[LeaseLostError]:
        return self._lost

    def stop_request(self) -> Optional[dict[str, Any]]:
        """A person's request that this run stop (`lease/<n>.stop.json`), or None: checked at each safe boundary."""
        return read_stop_request(self.lease_dir, self.n)

    def assert_held(self) -> None:
        """Raise LeaseLostError if the lease was taken over or let go, or the task folder is gone or another one; called before every write."""
        # Let go (or being let go) is not held: a write under it would land in a task another runner may now drive.
        if self._releasing and not self._lost:
            raise LeaseReleasedError(self.task_id)
        self._check_folder()
        if self._lost:
            raise self._lost

    def _check_folder(self) -> None:
        """Notice that the task folder is not the one the lease was taken in (the TypeScript Lease's FolderIdentity).

        Device and inode do not tell a folder from one deleted and made again under the name, which gets the old
        inode number back, and Python 3.11 gives no birth time on Linux: a folder whose change time moved since it was
        last seen to be the lease's is looked into, and is the lease's while it holds this holder's own entry, whose
        owner is a token no other holder has (a takeover writes an entry after it, never over it).
        """
        if self._lost or self._releasing:
            return
        task_dir = os.path.dirname(self.lease_dir)
        try:
            st = os.stat(task_dir)
        except OSError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) == self._folder[:2]:
            if st.st_ctime_ns == self._folder[2]:
                return
            if self._own_entry_there():
                self._folder = (st.st_dev, st.st_ino, st.st_ctime_ns)
                return
        self._lost = TaskFolderGoneError(self.task_id, task_dir, "replaced" if st is not None else "deleted")
        self._stop.set()

    def _own_entry_there(self) -> bool:
        held: Any = None
        try:
            data = files.read_bytes(os.path.join(self.lease_dir, f"{self.n}.json"), max_bytes=_ENTRY_BYTES)
            held = json.loads(data) if data is not None else None
        except (OSError, ValueError):
            pass
        return isinstance(held, dict) and held.get("owner") == self.entry["owner"]

    def start_heartbeat(self) -> None:
        if self._every <= 0:
            return
        self._thread = threading.Thread(target=self._beat_loop, name=f"waystation-lease-{self.task_id}", daemon=True)
        self._thread.start()

    def _beat_loop(self) -> None:
        while not self._stop.wait(self._every / 1000):
            try:
                self.heartbeat()
            except OSError:
                pass  # retried on the next tick; only a takeover loses the lease

    def heartbeat(self) -> None:
        """Refresh the heartbeat, or notice that someone took the lease over or the task folder is another one."""
        if self._lost or self._releasing:
            return
        self._check_folder()
        if self._lost:
            if self._on_lost:
                self._on_lost(self._lost)
            return
        current = highest_entry(self.lease_dir)
        if not current or current[0] != self.n:
            self._lost = LeaseLostError(self.task_id)
            self._stop.set()
            if self._on_lost:
                self._on_lost(self._lost)
            return
        self.entry = {**self.entry, "heartbeat_at": _iso()}
        target = os.path.join(self.lease_dir, f"{self.n}.json")
        files.commit_replace(files.write_temp(target, json.dumps(self.entry, separators=(",", ":")) + "\n", sync=False), target)

    def release(self) -> None:
        """Give the lease up: a released entry after ours."""
        self._stop.set()
        if self._lost or self._releasing:
            return
        self._releasing = True
        _write_exclusive(self.lease_dir, self.n + 1, {**self.entry, "heartbeat_at": _iso(), "released": True})
        try:
            files.fsync_dir(self.lease_dir)
        except OSError:
            pass


def acquire_lease(task_dir: str, task_id: str, owner: str = "python", ttl_ms: Optional[float] = None, heartbeat_ms: Optional[float] = None, on_lost: Optional[Callable[[LeaseLostError], None]] = None) -> Lease:
    """Take the lease on a task folder (stale entries are taken over), or raise LeaseHeldError naming the holder."""
    lease_dir = os.path.join(task_dir, "lease")
    ttl = lease_ttl_ms() if ttl_ms is None else ttl_ms
    os.makedirs(lease_dir, exist_ok=True)
    for _ in range(3):
        current = highest_entry(lease_dir)
        if current and current[1] and lease_is_live(current[1], ttl):
            raise LeaseHeldError(task_id, current[1])
        n = (current[0] if current else 0) + 1
        now = _iso()
        entry: dict[str, Any] = {
            "owner": f"{owner}:{secrets.token_hex(4)}",
            "pid": os.getpid(),
            "hostname": socket.gethostname(),
            "acquired_at": now,
            "heartbeat_at": now,
            "released": False,
        }
        token = process_start_token(os.getpid())
        if token is not None:
            entry["process_start"] = token
        if _write_exclusive(lease_dir, n, entry):
            files.fsync_dir(lease_dir)
            _prune(lease_dir, n)
            lease = Lease(task_id, lease_dir, n, entry, ttl, heartbeat_ms, on_lost)
            lease.start_heartbeat()
            return lease
    current = highest_entry(lease_dir)
    raise LeaseHeldError(task_id, (current[1] if current else None) or {"pid": 0, "hostname": "unknown", "heartbeat_at": ""})


def _prune(lease_dir: str, current: int) -> None:
    keep = _KEPT_ENTRIES
    if current <= keep:
        return
    for name in os.listdir(lease_dir):
        # Stop requests (`<n>.stop.json`) of runs long gone go with their entries.
        m = _ENTRY.match(name) or _STOP.match(name)
        if m and int(m.group(1)) < current - keep:
            files.remove_quietly(os.path.join(lease_dir, name))

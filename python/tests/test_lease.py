"""The lease: one holder at a time, takeover of stale entries, loss noticed by the holder."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from waystation import LeaseHeldError, LeaseLostError, TaskFolderGoneError, acquire_lease, read_lease
from waystation.lease import lease_is_live, lease_ttl_ms, process_start_token


def write_entry(task_dir, n, **entry):
    os.makedirs(os.path.join(task_dir, "lease"), exist_ok=True)
    base = {"owner": "other", "pid": 1, "hostname": socket.gethostname(), "acquired_at": "2026-01-01T00:00:00.000Z", "heartbeat_at": "2026-01-01T00:00:00.000Z", "released": False}
    base.update(entry)
    with open(os.path.join(task_dir, "lease", f"{n}.json"), "w") as f:
        json.dump(base, f)


def dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_live_holder_excludes_others_until_it_releases(tmp_path):
    task = str(tmp_path / "t")
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    assert lease.held and read_lease(task)["pid"] == os.getpid()
    with pytest.raises(LeaseHeldError, match=f"pid {os.getpid()}"):
        acquire_lease(task, "t")
    lease.release()
    assert read_lease(task)["released"] is True
    again = acquire_lease(task, "t", heartbeat_ms=0)
    assert again.n == 3
    again.release()


def test_an_entry_of_a_dead_process_is_taken_over_at_once(tmp_path):
    task = str(tmp_path / "t")
    write_entry(task, 1, pid=dead_pid(), heartbeat_at="2999-01-01T00:00:00.000Z")
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    assert lease.n == 2
    lease.release()


def test_a_reused_pid_with_another_start_time_is_stale(tmp_path):
    task = str(tmp_path / "t")
    if process_start_token(os.getpid()) is None:
        pytest.skip("no /proc here: process start times cannot be checked")
    write_entry(task, 1, pid=os.getpid(), process_start="another-boot:1", heartbeat_at="2999-01-01T00:00:00.000Z")
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    assert lease.n == 2
    lease.release()


def test_a_holder_on_another_host_is_judged_by_its_heartbeat(tmp_path):
    task = str(tmp_path / "t")
    write_entry(task, 1, hostname="elsewhere", pid=12345, heartbeat_at="2999-01-01T00:00:00.000Z")
    with pytest.raises(LeaseHeldError, match="elsewhere"):
        acquire_lease(task, "t")
    write_entry(task, 2, hostname="elsewhere", pid=12345, heartbeat_at="2000-01-01T00:00:00.000Z")
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    assert lease.n == 3
    lease.release()


def test_an_unreadable_entry_is_stale(tmp_path):
    task = str(tmp_path / "t")
    os.makedirs(os.path.join(task, "lease"))
    open(os.path.join(task, "lease", "1.json"), "w").write("{not json")
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    assert lease.n == 2
    lease.release()


def test_a_holder_notices_a_takeover_and_stops_writing(tmp_path):
    task = str(tmp_path / "t")
    lost = []
    lease = acquire_lease(task, "t", heartbeat_ms=0, on_lost=lost.append)
    write_entry(task, lease.n + 1, hostname="elsewhere")
    lease.heartbeat()
    assert not lease.held and lost and isinstance(lost[0], LeaseLostError)
    with pytest.raises(LeaseLostError, match="taken over"):
        lease.assert_held()


def test_a_holder_notices_its_task_folder_deleted_or_made_again_with_another_lease_in_it(tmp_path):
    task = str(tmp_path / "t")
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    lease.heartbeat()
    lease.assert_held()
    shutil.rmtree(task)
    # Made again with an entry of the same number: the inode may be the old folder's, the owner is not this holder.
    write_entry(task, lease.n, pid=os.getpid())
    with pytest.raises(TaskFolderGoneError, match="renamed or replaced during the run"):
        lease.assert_held()
    assert not lease.held

    lost = []
    gone = acquire_lease(str(tmp_path / "u"), "u", heartbeat_ms=0, on_lost=lost.append)
    shutil.rmtree(tmp_path / "u")
    gone.heartbeat()
    assert lost and isinstance(lost[0], TaskFolderGoneError) and "was deleted during the run" in str(lost[0])


def test_a_holder_keeps_its_lease_while_its_folder_changes_and_loses_it_once_the_folder_lacks_its_entry(tmp_path):
    task = str(tmp_path / "t")
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    # The holder's own writes move the folder's change time, and its heartbeats rewrite its entry.
    with open(os.path.join(task, "checkpoint.json.tmp"), "w") as f:
        f.write("{}")
    os.replace(os.path.join(task, "checkpoint.json.tmp"), os.path.join(task, "checkpoint.json"))
    lease.heartbeat()
    lease.assert_held()
    # A folder made again under the name with the old inode number: same device and inode, its change time moved,
    # and an entry of that number that is not this holder's.
    write_entry(task, lease.n, pid=os.getpid())
    os.remove(os.path.join(task, "checkpoint.json"))
    with pytest.raises(TaskFolderGoneError, match="renamed or replaced during the run"):
        lease.assert_held()


def test_the_heartbeat_refreshes_the_entry(tmp_path):
    task = str(tmp_path / "t")
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    before = read_lease(task)["heartbeat_at"]
    import time

    time.sleep(0.01)
    lease.heartbeat()
    assert read_lease(task)["heartbeat_at"] > before
    lease.release()


def test_ttl_comes_from_the_environment_when_it_is_a_positive_number():
    assert lease_ttl_ms({"WAYSTATION_LEASE_TTL_MS": "500"}) == 500
    assert lease_ttl_ms({"WAYSTATION_LEASE_TTL_MS": "-3"}) == 30_000
    assert lease_ttl_ms({"WAYSTATION_LEASE_TTL_MS": "soon"}) == 30_000
    assert not lease_is_live(None) and not lease_is_live({"released": True})


def test_a_typescript_runner_and_a_python_one_exclude_each_other(tmp_path):
    """The entry a Node process writes is the one this module reads (the same fields and rule)."""
    task = str(tmp_path / "t")
    node = subprocess.run(["node", "--version"], capture_output=True)
    if node.returncode != 0:
        pytest.skip("node is not installed")
    script = (
        "const fs=require('fs');const os=require('os');fs.mkdirSync(process.argv[1]+'/lease',{recursive:true});"
        "fs.writeFileSync(process.argv[1]+'/lease/1.json',JSON.stringify({owner:'worker:1',pid:process.pid,hostname:os.hostname(),"
        "acquired_at:new Date().toISOString(),heartbeat_at:new Date().toISOString(),released:false}));"
        "process.stdout.write('ready\\n');setTimeout(()=>{},5000);"
    )
    proc = subprocess.Popen(["node", "-e", script, task], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(LeaseHeldError):
            acquire_lease(task, "t")
    finally:
        proc.kill()
        proc.wait()
    lease = acquire_lease(task, "t", heartbeat_ms=0)
    assert lease.n == 2
    lease.release()


def test_a_lease_let_go_is_not_held_for_a_write(tmp_path):
    lease = acquire_lease(str(tmp_path / "t"), "t", heartbeat_ms=0)
    lease.assert_held()
    lease.release()
    with pytest.raises(LeaseLostError, match="was let go by this runner"):
        lease.assert_held()

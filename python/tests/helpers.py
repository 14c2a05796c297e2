"""Checkpoints to write in tests."""

from __future__ import annotations

from typing import Any

from waystation.store import now_iso


def checkpoint(task_id: str, steps: int = 2, **extra: Any) -> dict[str, Any]:
    """A valid checkpoint (without `version`) of a task with `steps` pending steps."""
    now = now_iso()
    cp: dict[str, Any] = {
        "schema_version": 3,
        "task_id": task_id,
        "task_name": "test",
        "status": "running",
        "phase": "start",
        "goal": "test the store",
        "plan": [{"id": f"s{i}", "name": f"step {i}", "status": "pending", "attempts": 0} for i in range(steps)],
        "current_step": 0,
        "total_steps": steps,
        "recovery": {"mode": "manual", "pending_approval": None, "decisions": [], "auto_attempts": 0},
        "run": {"created_at": now, "updated_at": now},
        "source": {"kind": "runtime"},
    }
    cp.update(extra)
    return cp


def without_version(cp: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cp.items() if k != "version"}

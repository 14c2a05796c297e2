"""A plan's steps, and the forms a plan may be given in.

`Agent(plan=...)`, a plan function's result and `waystation.task(plan=...)`
take the same forms, each item one of: a `PlannedStep`, a step id (the name is
the id), or an `(id, name)` pair. A step id is what a resume matches steps by,
so each must be a non-empty string and unique.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from .errors import ArgumentError


@dataclass
class PlannedStep:
    """One step of a plan: a stable id (a resume matches steps by id), a name, and optionally the JSON Schema of its result."""

    id: str
    name: str
    output_schema: Optional[dict[str, Any]] = None


def _step(item: Any, where: str) -> PlannedStep:
    if isinstance(item, PlannedStep):
        step = item
    elif isinstance(item, str):
        step = PlannedStep(item, item)
    elif isinstance(item, (tuple, list)) and len(item) == 2:
        step = PlannedStep(item[0], item[1])
    else:
        raise ArgumentError(f"{where} must be a PlannedStep, a step id (str) or an (id, name) pair, got {item!r:.80}")
    if not isinstance(step.id, str) or not step.id:
        raise ArgumentError(f"{where}: the step id must be a non-empty string, got {step.id!r:.80}")
    if not isinstance(step.name, str) or not step.name:
        raise ArgumentError(f"{where}: the name of step {step.id!r} must be a non-empty string, got {step.name!r:.80}")
    if step.output_schema is not None and not isinstance(step.output_schema, dict):
        raise ArgumentError(f"{where}: the output_schema of step {step.id!r} must be a JSON Schema (a dict), got {type(step.output_schema).__name__}")
    return step


def planned_steps(items: Any, what: str) -> list[PlannedStep]:
    """`items` as PlannedSteps (see the module's comment); ArgumentError, naming `what` and the item, for anything else."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise ArgumentError(f"{what} must be a list of steps, got {type(items).__name__}")
    steps = [_step(item, f"{what}[{i}]") for i, item in enumerate(items)]
    seen: set[str] = set()
    for s in steps:
        if s.id in seen:
            raise ArgumentError(f'{what} names step id "{s.id}" twice; step ids must be unique')
        seen.add(s.id)
    return steps

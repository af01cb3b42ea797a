"""The calls of a path through a benchmark's tools and what running them left: the records
every task source returns (`harness.trace.suites`, `tau2_tasks`, `bfcl_tasks`). Kept apart
from `suites` so that a task source can import them without importing `suites`, which
imports the task sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.targets.adapter import InvokeOutcome
from harness.targets.equality import JSON


@dataclass(frozen=True)
class Call:
    tool: str
    args: dict[str, Any]


@dataclass
class CallRecord:
    """One call of a path: the state around it and what it returned."""

    tool: str
    args: dict[str, Any]
    pre: JSON
    post: JSON
    outcome: InvokeOutcome


@dataclass
class PathRun:
    calls: list[CallRecord] = field(default_factory=list)
    final: JSON = None
    verdict: bool = False  # the shipped evaluator's

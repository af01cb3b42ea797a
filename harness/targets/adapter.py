"""The adapter protocol: what the harness needs of a benchmark to check and mutate its tools.

An adapter can (1) build a fresh environment, (2) snapshot its state as JSON, (3) invoke a
tool with arguments, (4) reset the environment, and it says where its tools' source lives
(for provenance checks and, later, mutation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from harness.targets.equality import JSON


@dataclass(frozen=True)
class InvokeOutcome:
    """What one tool call produced. `success` is False when the tool signalled an error."""

    success: bool
    result: JSON = None
    error_type: str | None = None
    error_message: str | None = None


class ResetUnsupported(Exception):
    """The target has no reset path."""


@runtime_checkable
class Adapter(Protocol):
    name: str

    def version(self) -> str:
        """The target's version, recorded in every freeze."""
        ...

    def tool_names(self) -> list[str]: ...

    def fresh(self) -> Any:
        """A new environment in its initial state."""
        ...

    def snapshot(self, env: Any) -> JSON:
        """The environment's whole state as JSON (dicts with str keys, lists, scalars)."""
        ...

    def invoke(self, env: Any, tool: str, args: dict[str, JSON]) -> InvokeOutcome:
        """Call `tool` with `args`; a raised Exception becomes success=False, never propagates."""
        ...

    def reset(self, env: Any) -> None:
        """Run the target's own reset path on `env`; raise ResetUnsupported if it has none."""
        ...

    def tool_function(self, tool: str) -> Callable[..., Any]:
        """The Python function behind `tool`, as currently bound (mutants rebind it)."""
        ...

    def injected_parameters(self, tool: str) -> frozenset[str]:
        """Parameters the adapter fills itself (environment objects), not agent arguments."""
        ...

    def source_root(self) -> Path:
        """The folder that provenance and source paths are relative to."""
        ...

    def contracts_dir(self) -> Path:
        """The folder holding this target's contract YAML files."""
        ...

    def volatile_paths(self) -> list[str]:
        """Path patterns that change by themselves (clocks, derived fields)."""
        ...


@runtime_checkable
class PackageVersions(Protocol):
    """Optional: the installed distributions a target's behaviour depends on (beyond its
    hashed source), recorded in a freeze with their versions (`harness.execution.freeze`)."""

    def package_versions(self) -> list[str]:
        """Distribution names, e.g. ["agentdojo"]."""
        ...


@runtime_checkable
class GraderAdapter(Protocol):
    """Optional: a target whose own grader can be replayed without a model (AgentDojo's
    user tasks: ground-truth calls, then the task's utility check)."""

    def grader_tasks(self, tool: str) -> list[str]:
        """Ids of the tasks whose ground truth calls `tool`, sorted."""
        ...

    def grade(self, task: str) -> bool:
        """Replay `task`'s ground truth on a fresh environment with the tools as currently
        bound (mutants included) and return the task's own utility verdict."""
        ...

"""The adapter protocol: what the harness needs of a benchmark to check and mutate its tools.

An adapter can (1) build a fresh environment, (2) snapshot its state as JSON, (3) invoke a
tool with arguments, (4) reset the environment, and it says where its tools' source lives
(for provenance checks and, later, mutation).

Refusals. A tool refuses by raising, or by returning a value its target treats as a
failure. The mutation operators need to know which `return` statements refuse; the
optional `is_refusal(value)` (`RefusalAdapter`) says so for a returned value
(`default_is_refusal` when an adapter does not define it: `(False, ...)`,
`{"error": ...}`, `"Error: ..."`, `False`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from harness.errors import HarnessError
from harness.targets.equality import JSON

ERROR_KEYS = frozenset({"error", "errors", "error_message"})


def default_is_refusal(value: JSON) -> bool | None:
    """The built-in shapes of a returned refusal: `False`; a list/tuple whose first item is
    `False` (`return False, "expired"`); a dict with an `error`/`errors`/`error_message`
    key (`return {"error": ...}`); a string starting with `Error` or `error` (`return
    "Error: no such file"`). True for those; None (no opinion) for anything else."""
    if value is False:
        return True
    if isinstance(value, list | tuple) and value and value[0] is False:
        return True
    if isinstance(value, dict) and ERROR_KEYS & set(value):
        return True
    if isinstance(value, str) and value[:5].lower() == "error":
        return True
    return None


def is_refusal(adapter: Any, value: JSON) -> bool | None:
    """The adapter's `is_refusal(value)` when it defines one, else `default_is_refusal`."""
    hook = getattr(adapter, "is_refusal", None)
    return default_is_refusal(value) if hook is None else hook(value)


@dataclass(frozen=True)
class InvokeOutcome:
    """What one tool call produced. `success` is False when the tool signalled an error."""

    success: bool
    result: JSON = None
    error_type: str | None = None
    error_message: str | None = None


class ResetUnsupported(HarnessError):
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


class RefusalAdapter(Protocol):
    """Optional member of an adapter (checked with `getattr`, so an adapter without it
    still meets `Adapter`): how its target refuses by return value."""

    def is_refusal(self, value: JSON) -> bool | None:
        """Optional: whether a value a tool (or a helper it calls) returns is a refusal
        (True), a success (False), or unknown (None). Called by the mutation operators on
        the static value of a `return` statement, with every part that is not a literal
        filled in several ways (None, True, False, 0, 1, "", "x", [], {}): a return counts
        as a refusal only if every filling says True. Adapters without it get
        `default_is_refusal`."""
        return default_is_refusal(value)


@dataclass(frozen=True)
class ReferenceCall:
    """One call of a task's reference solution: the tool and the arguments the benchmark's
    own ground truth passes (AgentDojo's ground-truth calls, tau2's gold actions, BFCL's
    ground truth per turn, the toy tasks)."""

    tool: str
    args: dict[str, JSON]


@runtime_checkable
class TaskAdapter(Protocol):
    """Optional: a target whose benchmark ships tasks that start from their own initial
    environment (a BFCL task's `initial_config`, a tau2 task's initialization actions, an
    AgentDojo injection-free task environment). The recorded-call corpora replay each
    task's reference calls from `task_environment(task)` in order."""

    def task_ids(self) -> list[str]:
        """Every task with a reference solution on this target's tools, sorted."""
        ...

    def task_environment(self, task: str) -> Any:
        """A new environment in `task`'s initial state (after its initialization actions),
        sharing nothing with the benchmark's data or with any other environment."""
        ...

    def reference_calls(self, task: str) -> list[ReferenceCall]:
        """`task`'s reference calls to this target's tools (read-only ones included, since
        they are part of the prefix that reproduces a later call's pre-state), in order."""
        ...

    # Optional beside these: `copy_environment(env)`, a new environment in `env`'s state
    # sharing nothing with it, or None when rebuilding the state costs less than copying it
    # (`harness.checker.dynamic.copy_of`).


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


@runtime_checkable
class SplitGrader(Protocol):
    """Optional, beside `GraderAdapter`: grading split into replaying a task and evaluating
    what the replay left, so that an evaluation whose inputs the mutant did not change need
    not run again (`harness.execution.coverage`). `grade(task)` must equal `evaluate(task,
    replay(task))`, raising where either raises. Optional: a class attribute
    `split_grading = False` has its tasks graded whole all the same (`splits`)."""

    def replay(self, task: str) -> tuple[Any, ...]:
        """Replay `task` with the tools as currently bound; return everything the evaluation
        reads besides the task itself (picklable, to be compared byte for byte)."""
        ...

    def evaluate(self, task: str, inputs: tuple[Any, ...]) -> bool:
        """The task's own verdict on what `replay` returned."""
        ...


def splits(adapter: Any) -> bool:
    """Whether coverage-guided scoring grades `adapter`'s tasks split (`SplitGrader`):
    replayed with the mutant, evaluated only when what the evaluation reads differs. An
    adapter that implements the split but whose evaluation costs less than the copy of its
    inputs a replay takes sets `split_grading = False`, and its tasks are graded whole (the
    same verdicts: `grade(t)` is `evaluate(t, replay(t))`)."""
    return isinstance(adapter, SplitGrader) and getattr(adapter, "split_grading", True)

"""AgentDojo's own grader, replayed without a model: the grader arm.

For a tool, the user tasks whose ground truth calls it; for a task, its ground-truth calls
run through the package's own pipeline (`GroundTruthPipeline` and
`TaskSuite.run_task_with_pipeline`) and its own utility check. The runtime is built from
the adapter's current bindings, so a mutant applied in memory is what the replay calls:
a mutant is caught by the grader when some task's utility verdict changes.
"""

from __future__ import annotations

import warnings
from functools import cache
from typing import Any, Protocol

from harness.targets.agentdojo.suite_data import load_suite, pipeline_on_first_read


class _Adapter(Protocol):
    suite: str
    benchmark_version: str

    @property
    def _data(self) -> Any: ...

    def fresh(self) -> Any: ...

    def _function(self, tool: str) -> Any: ...


@cache
def _task_calls(suite: str, version: str) -> dict[str, tuple[str, ...]]:
    """tool -> ids of the user tasks whose ground truth calls it (computed on the original)."""
    data = load_suite(suite, version)
    calls: dict[str, set[str]] = {}
    for task_id, task in data.suite.user_tasks.items():
        environment = task.init_environment(data.default_env.model_copy(deep=True))
        for call in task.ground_truth(environment):
            calls.setdefault(call.function, set()).add(task_id)
    return {tool: tuple(sorted(ids, key=_task_order)) for tool, ids in calls.items()}


def _task_order(task_id: str) -> tuple[str, int]:
    stem, _, number = task_id.rpartition("_")
    return (stem, int(number)) if number.isdigit() else (task_id, -1)


def grader_tasks(adapter: _Adapter, tool: str) -> list[str]:
    return list(_task_calls(adapter.suite, adapter.benchmark_version).get(tool, ()))


def grade(adapter: _Adapter, task_id: str) -> bool:
    """The task's utility verdict after replaying its ground truth with the current tools."""
    return bool(_run(adapter, task_id, None))


def replay(adapter: _Adapter, task_id: str) -> tuple[Any, ...]:
    """The task's ground truth replayed as `grade` replays it, stopped where the suite
    checks the result: what `_check_task_result` would be given besides the task (the
    model output, the environments before and after, the function-call trace)."""
    captured: list[tuple[Any, ...]] = []
    _run(adapter, task_id, captured)
    return captured[0]


def evaluate(adapter: _Adapter, task_id: str, inputs: tuple[Any, ...]) -> bool:
    """The suite's own utility check of a `replay`: `grade` is `evaluate` of `replay`."""
    suite = adapter._data.suite
    task = suite.user_tasks[task_id]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bool(type(suite)._check_task_result(suite, task, *inputs))


def _run(adapter: _Adapter, task_id: str, captured: list[tuple[Any, ...]] | None) -> bool:
    """`run_task_with_pipeline` on the task's ground truth; with `captured`, the suite's
    result check is not run but its inputs are appended there (the verdict is then False)."""
    pipeline_on_first_read()  # before the import below, whether or not the suite is loaded
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
    from agentdojo.functions_runtime import FunctionsRuntime

    suite = adapter._data.suite
    task = suite.user_tasks[task_id]

    def runtime(functions: list[Any]) -> FunctionsRuntime:
        return FunctionsRuntime([adapter._function(f.name) for f in functions])

    def capture(_task: Any, *inputs: Any) -> bool:
        assert captured is not None
        captured.append(inputs)
        return False

    if captured is not None:  # an instance attribute shadows the method for this replay
        suite._check_task_result = capture
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "model output was None" when a mutant aborts a call
            utility, _ = suite.run_task_with_pipeline(
                GroundTruthPipeline(task),
                task,
                injection_task=None,
                injections={},
                runtime_class=runtime,  # type: ignore[arg-type]
                environment=adapter.fresh(),
            )
    finally:
        if captured is not None:
            del suite._check_task_result
    return bool(utility)


def dependent_tasks(adapter: _Adapter) -> dict[str, list[str]]:
    """Every tool with the tasks whose verdict depends on it: which scores a defective tool
    would corrupt (a benchmark maintainer's view)."""
    return {
        tool: list(ids)
        for tool, ids in sorted(_task_calls(adapter.suite, adapter.benchmark_version).items())
    }

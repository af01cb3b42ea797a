"""The benchmark's own tasks, as the trace needs them: evaluators, gold calls, and a way to
run a call sequence through the target's tools as currently bound and ask the shipped
evaluator for its verdict.

Built in: AgentDojo (every user task of the suite: `utility` and, where a task overrides it,
`utility_from_traces`; the gold path is `ground_truth`, graded as the package's own
`TaskSuite._check_user_task_utility` does, with the task's `GROUND_TRUTH_OUTPUT` as the
model output), tau2-bench (`harness.trace.tau2_tasks`: the port's `base` split, read
sites from its scorers), BFCL multi-turn (`harness.trace.bfcl_tasks`: multi_turn_base, read
sites from its checker) and the toy domain (`toy_domain.tasks`). A target with neither has no tasks
to trace, and `suite_for` says so.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Sequence
from typing import Any, Protocol

from harness.errors import Problem, UserError
from harness.targets.adapter import Adapter, InvokeOutcome
from harness.targets.registry import Target
from harness.trace.paths import Call, CallRecord, PathRun
from harness.trace.readsites import Evaluator


class TaskSource(Protocol):
    """A benchmark's tasks. A source may also define `read_sites(task_id, live)`, used
    instead of walking `evaluators(task_id)` when its scoring is not one Python function per
    task (tau2: a database hash, assertion methods named by the task's data)."""

    name: str

    def task_ids(self) -> list[str]: ...

    def evaluators(self, task_id: str) -> list[Evaluator]: ...

    def live_state(self) -> Any:
        """An environment object, for the extractor's type look-ups."""
        ...

    def gold_calls(self, task_id: str) -> list[Call]: ...

    def run(self, task_id: str, calls: Sequence[Call]) -> PathRun:
        """Run `calls` from the task's initial state with the tools as currently bound."""
        ...


def _run_calls(adapter: Adapter, env: Any, calls: Sequence[Call]) -> list[CallRecord]:
    records = []
    for call in calls:
        before = adapter.snapshot(env)
        outcome = adapter.invoke(env, call.tool, dict(call.args))
        records.append(
            CallRecord(call.tool, dict(call.args), before, adapter.snapshot(env), outcome)
        )
    return records


def _text(outcome: InvokeOutcome) -> str:
    if outcome.success:
        return outcome.result if isinstance(outcome.result, str) else json.dumps(outcome.result)
    return f"{outcome.error_type}: {outcome.error_message}"


class AgentDojoTasks:
    """The user tasks of one AgentDojo suite."""

    STATE = frozenset({"pre_environment", "post_environment"})
    TRANSCRIPT = frozenset({"model_output", "traces"})

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.name = adapter.name
        self.suite = adapter._data.suite  # the loaded TaskSuite (the adapter's own cache)

    def task_ids(self) -> list[str]:
        from harness.targets.agentdojo.grader import _task_order

        return sorted(self.suite.user_tasks, key=_task_order)

    def evaluators(self, task_id: str) -> list[Evaluator]:
        from agentdojo.base_tasks import BaseUserTask

        task = self.suite.user_tasks[task_id]
        kind = type(task)
        out = [Evaluator(kind.utility, self.STATE, self.TRANSCRIPT, task)]
        if kind.utility_from_traces is not BaseUserTask.utility_from_traces:
            out.append(Evaluator(kind.utility_from_traces, self.STATE, self.TRANSCRIPT, task))
        return out

    def live_state(self) -> Any:
        return self.adapter.fresh()

    def _initial(self, task_id: str) -> Any:
        return self.suite.user_tasks[task_id].init_environment(self.adapter.fresh())

    def gold_calls(self, task_id: str) -> list[Call]:
        task = self.suite.user_tasks[task_id]
        return [Call(c.function, dict(c.args)) for c in task.ground_truth(self._initial(task_id))]

    def run(self, task_id: str, calls: Sequence[Call]) -> PathRun:
        from agentdojo.functions_runtime import FunctionCall

        task = self.suite.user_tasks[task_id]
        env = self._initial(task_id)
        pre = env.model_copy(deep=True)
        records = _run_calls(self.adapter, env, calls)
        traces = [FunctionCall(function=c.tool, args=c.args) for c in calls]
        output = task.GROUND_TRUTH_OUTPUT
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verdict = task.utility_from_traces(output, pre, env, traces)
            if verdict is None:
                verdict = task.utility(output, pre, env)
        return PathRun(records, self.adapter.snapshot(env), bool(verdict))


class ToyTasks:
    """`toy_domain.tasks.TASKS` over the toy target (or a variant of it)."""

    def __init__(self, adapter: Any) -> None:
        from toy_domain.tasks import TASKS

        self.adapter = adapter
        self.name = adapter.name
        self.tasks = {task.id: task for task in TASKS}

    def task_ids(self) -> list[str]:
        return list(self.tasks)

    def evaluators(self, task_id: str) -> list[Evaluator]:
        return [
            Evaluator(
                self.tasks[task_id].utility, frozenset({"pre", "post"}), frozenset({"transcript"})
            )
        ]

    def live_state(self) -> Any:
        return self.adapter.fresh()

    def gold_calls(self, task_id: str) -> list[Call]:
        return [Call(c.function, dict(c.args)) for c in self.tasks[task_id].ground_truth]

    def run(self, task_id: str, calls: Sequence[Call]) -> PathRun:
        env = self.adapter.fresh()
        pre = copy.deepcopy(env)
        records = _run_calls(self.adapter, env, calls)
        transcript = [_text(r.outcome) for r in records]
        verdict = self.tasks[task_id].utility(transcript, pre, env)
        return PathRun(records, self.adapter.snapshot(env), bool(verdict))


def suite_for(target: Target) -> TaskSource:
    from harness.targets.toy import ToyAdapter

    adapter = target.adapter
    if isinstance(adapter, ToyAdapter):
        return ToyTasks(adapter)
    from harness.targets.agentdojo.adapter import AgentDojoAdapter  # imports agentdojo lazily

    if isinstance(adapter, AgentDojoAdapter):
        return AgentDojoTasks(adapter)
    from harness.targets.tau2.adapter import Tau2Adapter

    if isinstance(adapter, Tau2Adapter):
        from harness.trace.tau2_tasks import Tau2Tasks  # imports tau2-bench: kept lazy

        return Tau2Tasks(adapter)
    from harness.targets.bfcl.adapter import BfclAdapter

    if isinstance(adapter, BfclAdapter):
        from harness.trace.bfcl_tasks import BfclTasks  # imports bfcl-eval: kept lazy

        return BfclTasks(adapter)
    raise UserError(
        Problem(
            target.name,
            "tasks",
            "the trace knows no task suite of this target",
            "trace an AgentDojo suite, a tau2 domain, a BFCL class or the toy domain "
            "(harness/trace/suites.py)",
        )
    )

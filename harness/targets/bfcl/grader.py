"""BFCL's multi-turn grader, replayed without a model: two grader arms, named apart.

A grader task is `TASK:ARM`, for every task of multi_turn_base whose ground truth calls the
tool. The "model" is the ground truth itself, run through the classes as currently bound
(mutants included), one step per turn.

- `shipped` (differential): BFCL's own `multi_turn_checker`, unmodified. After each turn it
  compares the public attributes of the model's instances with those of instances that ran
  the ground truth (`state_checker`), and checks that the ground truth's results appear among
  the model's (`response_checker`). Both sides run on the same classes, so a mutant is on
  both sides of every comparison, as with tau2's `db_match`: a deterministic mutant changes
  both alike and this arm cannot see it. That is a property of the benchmark.
- `expected`: the same two checks against an expectation built from the *unmutated* classes:
  the ground truth run on a private copy of each class module, loaded from the installed
  file under another name, which no mutant ever rebinds. States are compared as canonical
  public JSON (`state.py`; stricter than BFCL's `Directory.__eq__` only in that a directory's
  parent must match too), results with BFCL's own `response_checker`.

The checker keeps its instances in its module's globals under
`{model_name}_{test_entry_id}_{class}_instance` and never clears them, so a second grade of
the same task would start from the first's final state. Every shipped grade runs under its
own model name and deletes the instances it created, so nothing outlives one grade.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import itertools
import json
import pickle
import sys
import types
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from harness.targets.bfcl import isolation
from harness.targets.bfcl.package import CLASSES, api_class, bfcl_tasks
from harness.targets.bfcl.state import public_state
from harness.targets.bfcl.tasks import BfclTask, call_tool_name, parse_call, task_order

ARMS = ("shipped", "expected")
CATEGORY = "multi_turn_base"
PRISTINE_PREFIX = "harness_bfcl_pristine."
MODEL_NAME = "contract_harness"
_grades = itertools.count()


class _Adapter(Protocol):
    slug: str

    def tool_names(self) -> list[str]: ...


def _tasks() -> dict[str, BfclTask]:
    return bfcl_tasks()


@cache
def _tool_tasks() -> dict[str, tuple[str, ...]]:
    """tool name -> ids of the tasks whose ground truth calls it, in task order."""
    calls: dict[str, list[str]] = {}
    for task_id in sorted(_tasks(), key=task_order):
        for turn in _tasks()[task_id].ground_truth:
            for text in turn:
                ids = calls.setdefault(call_tool_name(text), [])
                if task_id not in ids:
                    ids.append(task_id)
    return {tool: tuple(ids) for tool, ids in calls.items()}


def grader_tasks(adapter: _Adapter, tool: str, arm: str) -> list[str]:
    return [f"{task}:{arm}" for task in _tool_tasks().get(tool, ())]


def split_task(grader_task: str) -> tuple[str, str]:
    task, _, arm = grader_task.rpartition(":")
    if arm not in ARMS or task not in _tasks():
        raise KeyError(f"unknown BFCL grader task {grader_task!r} (TASK:{'|'.join(ARMS)})")
    return task, arm


def _isolate() -> None:
    """Every class module remembered (a task involves classes of other targets too), then
    its module-level state put back."""
    for slug in CLASSES:
        api_class(slug)
    isolation.restore()


def grade(grader_task: str) -> bool:
    """The verdict of one arm on one task after its gold replay (mutants included)."""
    task_id, arm = split_task(grader_task)
    task = _tasks()[task_id]
    _isolate()
    if arm == "shipped":
        return shipped_verdict(task)
    return evaluate_expected(task, (replay_model(task), expectation(task.id)))


# --- the shipped arm ------------------------------------------------------------------------


def _checker_modules() -> tuple[types.ModuleType, types.ModuleType]:
    checker = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    return checker, utils


def test_entry(task: BfclTask) -> dict[str, Any]:
    """The task as BFCL's checker reads it (a deep copy: the checker must not write ours)."""
    return {
        "id": task.id,
        "initial_config": copy.deepcopy(task.initial_config),
        "involved_classes": list(task.involved_classes),
    }


def model_turns(task: BfclTask) -> list[list[list[str]]]:
    """The ground truth as a model's decoded result: per turn, one step holding its calls."""
    return [[list(turn)] if turn else [] for turn in task.ground_truth]


def shipped_verdict(task: BfclTask) -> bool:
    """BFCL's `multi_turn_checker` on the gold replay, its instance cache emptied after."""
    checker, utils = _checker_modules()
    model_name = f"{MODEL_NAME}_{next(_grades)}"
    cached = set(vars(utils))
    try:
        result = checker.multi_turn_checker(
            model_turns(task),
            [list(turn) for turn in task.ground_truth],
            test_entry(task),
            CATEGORY,
            model_name,
        )
    finally:
        for name in set(vars(utils)) - cached:
            if name.endswith("_instance"):
                del vars(utils)[name]
    return bool(result["valid"])


def _copied(instances: dict[str, Any]) -> dict[str, Any]:
    """An equal, independent copy of the instances: a pickle round trip, several times
    faster than `copy.deepcopy` on these plain API objects (their state is lists, dicts and
    scalars); `copy.deepcopy` where an instance does not pickle."""
    try:
        copied: dict[str, Any] = pickle.loads(pickle.dumps(instances, pickle.HIGHEST_PROTOCOL))
    except Exception:  # an unpicklable attribute: deepcopy knows other ways to copy
        return copy.deepcopy(instances)
    return copied


def replay_shipped(task: BfclTask) -> tuple[Any, ...]:
    """What `multi_turn_checker` compares, turn by turn, run as it runs it: per turn the
    model's steps' results, deep copies of the model's and the ground truth's instances after
    the turn, and the ground truth's results (picklable; its instance cache emptied after)."""
    _, utils = _checker_modules()
    model_name = f"{MODEL_NAME}_{next(_grades)}"
    entry = test_entry(task)
    cached = set(vars(utils))
    turns = []
    try:
        for turn, steps in zip(task.ground_truth, model_turns(task), strict=True):
            step_results, model_instances = [], {}
            for step in steps:
                results, model_instances = utils.execute_multi_turn_func_call(
                    step,
                    entry["initial_config"],
                    entry["involved_classes"],
                    model_name,
                    task.id,
                    long_context=False,
                    is_evaL_run=True,
                )
                step_results.append(results)
            gold_results, gold_instances = utils.execute_multi_turn_func_call(
                list(turn),
                entry["initial_config"],
                entry["involved_classes"],
                model_name + "_ground_truth",
                task.id,
                long_context=False,
                is_evaL_run=True,
            )
            turns.append(
                (
                    steps,
                    step_results,
                    _copied(model_instances),
                    _copied(gold_instances),
                    gold_results,
                )
            )
    finally:
        for name in set(vars(utils)) - cached:
            if name.endswith("_instance"):
                del vars(utils)[name]
    return tuple(turns)


def evaluate_shipped(task: BfclTask, turns: tuple[Any, ...]) -> bool:
    """`multi_turn_checker`'s checks, in its order, on what `replay_shipped` recorded."""
    checker, utils = _checker_modules()
    so_far: list[str] = []
    for index, (steps, step_results, model, gold, gold_results) in enumerate(turns):
        for results in step_results:
            so_far.extend(results)
        if task.ground_truth[index] and (not steps or utils.is_empty_execute_response(steps)):
            return False
        if not task.ground_truth[index]:
            continue
        if len(model) != len(gold) or set(model) != set(gold):
            raise AssertionError(f"turn {index}: model and ground-truth instances differ")
        if not checker.state_checker(model, gold)["valid"]:
            return False
        if not checker.response_checker(so_far, gold_results, index)["valid"]:
            return False
    return True


def replay(grader_task: str) -> tuple[Any, ...]:
    """The replay half of `grade` (`SplitGrader`): what the arm's evaluation reads."""
    task_id, arm = split_task(grader_task)
    _isolate()
    task = _tasks()[task_id]
    if arm == "shipped":
        return replay_shipped(task)
    return (replay_model(task), expectation(task_id))


def evaluate(grader_task: str, inputs: tuple[Any, ...]) -> bool:
    """The evaluation half of `grade`: `grade(t)` is `evaluate(t, replay(t))`."""
    task_id, arm = split_task(grader_task)
    task = _tasks()[task_id]
    if arm == "shipped":
        return evaluate_shipped(task, inputs)
    return evaluate_expected(task, inputs)


def cached_instances() -> list[str]:
    """The checker's cached instances now in its module's globals (empty between grades)."""
    _, utils = _checker_modules()
    return sorted(name for name in vars(utils) if name.endswith("_instance"))


# --- the expected arm -----------------------------------------------------------------------


@cache
def pristine_class(class_name: str) -> type:
    """`class_name` from a private copy of its installed module: never rebound by a mutant."""
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    source = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
    name = PRISTINE_PREFIX + source.__name__
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, source.__file__)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        isolation.remember(module)
    return getattr(module, class_name)


def _registered_class(class_name: str) -> type:
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    return getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name]), class_name)


def result_text(value: Any) -> str:
    """A call's result as BFCL's executor records it (`execute_multi_turn_func_call`)."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except Exception:
            return str(value)
    return str(value)


@dataclass(frozen=True)
class TurnRecord:
    """What one turn of a replay left: each class's public state and the calls' results."""

    states: dict[str, Any]
    results: tuple[str, ...]


def run_turns(task: BfclTask, pristine: bool) -> tuple[TurnRecord, ...]:
    """The ground truth of `task`, turn by turn, on the registered classes (as bound now) or
    on the pristine ones, executed as BFCL's executor does (errors become result strings)."""
    from bfcl_eval.constants.executable_backend_config import STATELESS_CLASSES

    instances: dict[str, Any] = {}
    methods: dict[str, tuple[Any, dict[str, Any]]] = {}
    for class_name in task.involved_classes:
        cls = pristine_class(class_name) if pristine else _registered_class(class_name)
        instance = cls()
        if class_name not in STATELESS_CLASSES:
            config = copy.deepcopy(task.initial_config.get(class_name, {}))
            instance._load_scenario(config, long_context=False)
        instances[class_name] = instance
        functions = {n: v for n, v in vars(cls).items() if not n.startswith("_") and callable(v)}
        for name in functions:
            methods[name] = (instance, functions)
    records = []
    for turn in task.ground_truth:
        results = []
        for text in turn:
            try:
                instance, functions = methods[call_tool_name(text)]
                tool, args = parse_call(text, functions)
                results.append(result_text(getattr(type(instance), tool)(instance, **args)))
            except Exception as exc:
                results.append(f"Error during execution: {exc}")
        states = {name: public_state(inst) for name, inst in instances.items()}
        records.append(TurnRecord(states, tuple(results)))
    return tuple(records)


@cache
def expectation(task_id: str) -> tuple[TurnRecord, ...]:
    """The ground truth on the unmutated classes (once per process: they never change)."""
    isolation.restore()
    return run_turns(_tasks()[task_id], pristine=True)


def replay_model(task: BfclTask) -> tuple[TurnRecord, ...]:
    return run_turns(task, pristine=False)


def evaluate_expected(
    task: BfclTask, inputs: tuple[tuple[TurnRecord, ...], tuple[TurnRecord, ...]]
) -> bool:
    """Per turn with ground truth: states equal to the expectation's, and the expectation's
    results among the model's so far (BFCL's `response_checker`). `inputs` is (the gold
    replay on the classes as bound, the expectation): the pristine classes run in `replay`,
    so an evaluation starts no tool code."""
    checker, _ = _checker_modules()
    model, expected = inputs
    so_far: list[str] = []
    for index, (mine, gold) in enumerate(zip(model, expected, strict=True)):
        so_far.extend(mine.results)
        if not task.ground_truth[index]:
            continue
        if mine.states != gold.states:
            return False
        if not checker.response_checker(so_far, list(gold.results), index)["valid"]:
            return False
    return True

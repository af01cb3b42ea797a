"""tau2's own scorers, replayed without a model: the grader arm.

For every task of the port's `base` split, its gold actions (`evaluation_criteria.actions`)
are replayed on a fresh environment with the tools as currently bound (mutants included),
after telecom's initialisation actions, and graded by the port's own state-grounded scoring
logic, one grader task per (task, scorer):

- `TASK:db_match` (airline, retail): the port's `db_match` builds its expected database by
  running the same gold actions with the same tool classes (`get_expected_db`, `ToolError`
  swallowed) and compares database hashes. Here both replays run on fresh environments
  and their snapshots are compared (the hash is of the same dump). The expected state is
  rebuilt with the *mutated* tools, so the scorer is differential by construction: a
  deterministic mutant changes both sides alike and this scorer never changes its verdict.
  `independent_db_match` (not part of the arm) compares against the expected state the
  original tools leave, to measure what that costs.
- `TASK:env_assertions` (telecom): every `env_assertions` call (`assert_*` methods of the
  agent's or user's tools) on the replayed environment, compared to its `assert_value`.

Transcript-grounded scorers are not replayed: required actions (`evaluate_required_actions`)
compare the agent's calls with the gold actions, which a gold replay makes by definition,
and `communicate_info` reads the agent's messages, of which a replay has none.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from typing import Any, Protocol

from harness.targets.equality import JSON, canonical_equal
from harness.targets.tau2.sync import telecom_sync

SKIPPED_ACTIONS = frozenset({"calculate", "transfer_to_human_agents"})  # as get_expected_db
SCORERS = {"airline": ("db_match",), "retail": ("db_match",), "telecom": ("env_assertions",)}


class _Adapter(Protocol):
    domain: str

    def fresh(self) -> Any: ...

    def snapshot(self, env: Any) -> JSON: ...


@cache
def tasks(domain: str) -> dict[str, Any]:
    """The port's tasks of the `base` split, by id, as its own `Task` models."""
    from inspect_evals.tau2.data_model.tasks import Task
    from inspect_evals.tau2.utils import TAU2_DATA_DIR

    folder = TAU2_DATA_DIR / "domains" / domain
    plain = folder / "tasks.json"
    if plain.exists():
        records = json.loads(plain.read_text(encoding="utf-8"))
    else:
        with gzip.open(folder / "tasks.json.gz") as handle:
            records = json.loads(handle.read())
    base = set(json.loads((folder / "split_tasks.json").read_text(encoding="utf-8"))["base"])
    return {r["id"]: Task.model_validate(r) for r in records if r["id"] in base}


def _actions(task: Any) -> list[Any]:
    criteria = task.evaluation_criteria
    return [] if criteria is None or criteria.actions is None else list(criteria.actions)


def gold_calls(domain: str) -> list[tuple[str, dict[str, Any]]]:
    """Every gold action of every task, in task order: (tool, arguments)."""
    return [(a.name, dict(a.arguments)) for t in tasks(domain).values() for a in _actions(t)]


@cache
def _task_calls(domain: str) -> dict[str, tuple[str, ...]]:
    calls: dict[str, list[str]] = {}
    for task_id, task in tasks(domain).items():
        for action in _actions(task):
            ids = calls.setdefault(action.name, [])
            if task_id not in ids:
                ids.append(task_id)
    return {tool: tuple(ids) for tool, ids in calls.items()}


def grader_tasks(adapter: _Adapter, tool: str) -> list[str]:
    """`TASK:SCORER` for every task whose gold actions call `tool`, every scorer replayed."""
    ids = _task_calls(adapter.domain).get(tool, ())
    return [f"{task}:{scorer}" for task in ids for scorer in SCORERS[adapter.domain]]


def replay(adapter: _Adapter, task: Any) -> Any:
    """A fresh environment after `task`'s initialisation and gold actions (errors swallowed,
    as the port's `get_expected_db` swallows `ToolError`)."""
    env = initialized(adapter, task)
    for action in _actions(task):
        if action.name in SKIPPED_ACTIONS:
            continue
        role = "agent" if action.requestor == "assistant" else "user"
        _call(adapter, env, role, action.name, action.arguments)
    return env


def initialized(adapter: _Adapter, task: Any) -> Any:
    """A fresh environment after `task`'s initialisation actions (telecom's broken devices)."""
    env = adapter.fresh()
    state = task.initial_state
    for action in (state.initialization_actions or []) if state is not None else []:
        _call(
            adapter,
            env,
            "agent" if action.env_type == "assistant" else "user",
            action.func_name,
            action.arguments,
        )
    return env


def gold_actions(task: Any) -> list[tuple[str, dict[str, Any]]]:
    """`task`'s gold actions in order, as (tool, arguments)."""
    return [(a.name, dict(a.arguments)) for a in _actions(task)]


def _instance(env: Any, role: str) -> Any:
    return env.instances.get(role) or env.instances[""]


def _call(adapter: _Adapter, env: Any, role: str, name: str, arguments: dict[str, Any]) -> Any:
    """Call a method of the role's tool class as currently bound (telecom syncs after)."""
    import copy

    instance = _instance(env, role)
    try:
        result = getattr(type(instance), name)(instance, **copy.deepcopy(arguments))
    except Exception:  # a refused gold action: the port's replays go on past a ToolError
        result = None
    if adapter.domain == "telecom":
        telecom_sync(env)
    return result


def grade(adapter: _Adapter, grader_task: str) -> bool:
    """The verdict of one port scorer on one task after its gold replay (mutants included)."""
    task_id, _, scorer = grader_task.rpartition(":")
    task = tasks(adapter.domain)[task_id]
    if scorer == "db_match":
        predicted = adapter.snapshot(replay(adapter, task))
        expected = adapter.snapshot(replay(adapter, task))  # get_expected_db: the same tools
        return canonical_equal(predicted, expected)
    if scorer == "env_assertions":
        env = replay(adapter, task)
        for assertion in task.evaluation_criteria.env_assertions or []:
            role = "agent" if assertion.env_type == "assistant" else "user"
            instance = _instance(env, role)
            try:
                value = getattr(type(instance), assertion.func_name)(
                    instance, **assertion.arguments
                )
            except Exception:
                return False
            if value != assertion.assert_value:
                return False
        return True
    raise KeyError(f"unknown grader task {grader_task!r}")


def independent_db_match(adapter: _Adapter, task_id: str, expected: JSON) -> bool:
    """db_match against an expected state computed once with the original tools."""
    return canonical_equal(
        adapter.snapshot(replay(adapter, tasks(adapter.domain)[task_id])), expected
    )

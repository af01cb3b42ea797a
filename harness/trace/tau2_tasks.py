"""tau2-bench's tasks as the trace needs them: the port's scorers read statically, the gold
actions replayed through the adapter.

Tasks are the `base` split of the inspect-evals port (`harness.targets.tau2.grader.tasks`),
gold calls their `evaluation_criteria.actions`. The read sites come from the port's own
scoring code, scorer by scorer, as each domain's `*_scorer` combines them:

- `db_match` (airline, retail): `expected_db.db.get_hash() == predicted_db.db.get_hash()`
  hashes the whole database, so it is one `whole_state` site at that line. A task without
  action criteria is scored CORRECT before the hash: no site.
- `env_assertions` (telecom): the scorer calls `env_tools.__getattribute__(func_name)` with
  the task's arguments. Each named assertion method is walked by the extractor with `self`
  bound to its role's part of the state (`agent`, `user`), the scorer counted as the first
  of the `MAX_HOPS` hops, so helpers beyond the third call are unresolved as for AgentDojo.
- `score_communicated_info` (airline, retail; only when the task lists `communicate_info`)
  and `evaluate_required_actions` (telecom; only when the reward basis has `ACTION`) read
  the agent's messages and tool calls: `transcript` sites.

Each site is anchored at the call in the installed scorer source that makes it; a scorer
whose anchor is not found (a changed port) gives an `unresolved` site, never a silent
nothing. The extractor reads `self.db.<table>`, the snapshot has `<table>` directly under
the role key: the `db` segment is dropped. The shipped verdict of a path is that of the
state-grounded scorers, as the grader arm computes it (`db_match` against the same tools'
replay of the gold actions, the telecom assertions on the final state); the transcript
scorers are not replayed (a gold path has no agent messages).
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
from collections.abc import Callable, Sequence
from functools import cache
from types import ModuleType
from typing import Any

from harness.targets.equality import canonical_equal
from harness.trace.paths import Call, CallRecord, PathRun
from harness.trace.readsites import Evaluator, ReadSite, SiteKind, read_sites

# scorer -> (module, function, the call in it that reads, what it reads)
ANCHORS: dict[str, tuple[str, str, str, SiteKind]] = {
    "db_match": ("inspect_evals.tau2.common.scorer", "db_match", "get_hash", SiteKind.WHOLE_STATE),
    "communicate_info": (
        "inspect_evals.tau2.common.scorer",
        "score_communicated_info",
        "get_messages_from_agent",
        SiteKind.TRANSCRIPT,
    ),
    "required_actions": (
        "inspect_evals.tau2.common.scorer",
        "evaluate_required_actions",
        "find_unused_actions",
        SiteKind.TRANSCRIPT,
    ),
    "env_assertions": (
        "inspect_evals.tau2.telecom.scorer",
        "env_assertions",
        "__getattribute__",
        SiteKind.STATE,
    ),
}
SCORERS = {
    "airline": ("db_match", "communicate_info"),
    "retail": ("db_match", "communicate_info"),
    "telecom": ("required_actions", "env_assertions"),
}
ROLE_KEYS = {"assistant": "agent", "user": "user"}


@cache
def _anchor(scorer: str) -> tuple[str, Callable[..., Any] | None]:
    """(qualname:line of the reading call in the installed port, the scorer's function)."""
    import importlib

    module_name, function_name, call, _ = ANCHORS[scorer]
    module: ModuleType = importlib.import_module(module_name)
    function = inspect.unwrap(getattr(module, function_name, None) or (lambda: None))
    try:
        lines, start = inspect.getsourcelines(function)
    except (OSError, TypeError):
        return "", None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == call:
                return f"{module_name}.{function_name}:{start + node.lineno - 1}", function
    return "", function


def _strip_db(path: tuple[str, ...] | None, roles: bool) -> tuple[str, ...] | None:
    """`agent.db.lines.*` -> `agent.lines.*` (telecom); `db.users.*` -> `users.*`."""
    if path is None:
        return None
    at = 1 if roles else 0
    return (*path[:at], *path[at + 1 :]) if path[at : at + 1] == ("db",) else path


class Tau2Tasks:
    """The `base` split of one tau2 domain of the port."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.name = adapter.name
        self.domain: str = adapter.domain
        self.roles = self.domain == "telecom"

    def _tasks(self) -> dict[str, Any]:
        from harness.targets.tau2.grader import tasks

        return tasks(self.domain)

    def task_ids(self) -> list[str]:
        return list(self._tasks())

    def evaluators(self, task_id: str) -> list[Evaluator]:
        """The assertion methods the task's `env_assertions` name (the other scorers are not
        Python the extractor can walk per task: their sites come from `read_sites`)."""
        criteria = self._tasks()[task_id].evaluation_criteria
        if "env_assertions" not in SCORERS[self.domain] or criteria is None:
            return []
        _, caller = _anchor("env_assertions")
        out = []
        for assertion in criteria.env_assertions or []:
            role = ROLE_KEYS.get(assertion.env_type, "user")
            cls = self.adapter._data.classes[role]
            method = vars(cls).get(assertion.func_name)
            if method is None:
                continue
            out.append(
                Evaluator(
                    method,
                    frozenset(),
                    frozenset(),
                    roots=(("self", (role,)),),
                    callers=(caller,) if caller is not None else (),
                )
            )
        return out

    def live_state(self) -> Any:
        env = self.adapter.fresh()
        return dict(env.instances) if self.roles else env.instances[""]

    def read_sites(self, task_id: str, live: Any) -> list[ReadSite]:
        task = self._tasks()[task_id]
        criteria = task.evaluation_criteria
        sites: list[ReadSite] = []
        for scorer in SCORERS[self.domain]:
            where, _ = _anchor(scorer)
            if scorer == "db_match" and criteria is not None and criteria.actions is not None:
                sites.append(
                    ReadSite(SiteKind.WHOLE_STATE, (), where, "the whole database hashed")
                    if where
                    else ReadSite(SiteKind.UNRESOLVED, None, "db_match", "get_hash not found")
                )
            elif scorer == "communicate_info" and criteria and criteria.communicate_info:
                sites.append(self._transcript(where, "the agent's messages"))
            elif (
                scorer == "required_actions"
                and criteria is not None
                and "ACTION" in criteria.reward_basis
            ):
                sites.append(self._transcript(where, "the agent's tool calls"))
            elif scorer == "env_assertions" and criteria and criteria.env_assertions:
                if not where:
                    sites.append(
                        ReadSite(SiteKind.UNRESOLVED, None, "env_assertions", "call not found")
                    )
                    continue
                for site in read_sites(self.evaluators(task_id), live):
                    sites.append(
                        ReadSite(site.kind, _strip_db(site.path, self.roles), site.where, site.note)
                    )
        return sorted(set(sites), key=lambda s: (s.kind, s.path or (), s.where, s.note))

    @staticmethod
    def _transcript(where: str, what: str) -> ReadSite:
        if not where:
            return ReadSite(SiteKind.UNRESOLVED, None, "transcript scorer", f"{what}: not found")
        return ReadSite(SiteKind.TRANSCRIPT, None, where, what)

    def gold_calls(self, task_id: str) -> list[Call]:
        from harness.targets.tau2.grader import _actions

        return [Call(a.name, dict(a.arguments)) for a in _actions(self._tasks()[task_id])]

    def _initial(self, task: Any) -> Any:
        from harness.targets.tau2.grader import _call

        env = self.adapter.fresh()
        state = task.initial_state
        for action in (state.initialization_actions or []) if state is not None else []:
            role = ROLE_KEYS.get(action.env_type, "user") if self.roles else ""
            _call(self.adapter, env, role, action.func_name, action.arguments)
        return env

    def run(self, task_id: str, calls: Sequence[Call]) -> PathRun:
        from harness.targets.tau2.grader import SKIPPED_ACTIONS, _instance, replay

        task = self._tasks()[task_id]
        env = self._initial(task)
        records = []
        for call in calls:
            if call.tool in SKIPPED_ACTIONS and call.tool not in self.adapter.tool_names():
                continue  # not a tool of the target: it changes nothing (get_expected_db)
            before = self.adapter.snapshot(env)
            outcome = self.adapter.invoke(env, call.tool, copy.deepcopy(dict(call.args)))
            records.append(
                CallRecord(call.tool, dict(call.args), before, self.adapter.snapshot(env), outcome)
            )
        final = self.adapter.snapshot(env)
        criteria = task.evaluation_criteria
        verdict = True
        if "db_match" in SCORERS[self.domain] and criteria and criteria.actions is not None:
            # get_expected_db: the gold actions again, with the same tools as bound now
            verdict = canonical_equal(final, self.adapter.snapshot(replay(self.adapter, task)))
        for assertion in (criteria.env_assertions or []) if criteria else []:
            instance = _instance(env, ROLE_KEYS.get(assertion.env_type, "user"))
            try:
                value = getattr(type(instance), assertion.func_name)(
                    instance, **assertion.arguments
                )
            except Exception:  # the port's scorer would raise: the task fails
                value = not assertion.assert_value
            verdict = verdict and value == assertion.assert_value
        return PathRun(records, final, bool(verdict))

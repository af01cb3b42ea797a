"""BFCL multi-turn's tasks as the trace needs them: the checker's reads, the gold calls.

Tasks are the 200 of multi_turn_base that involve the target's class
(`BfclAdapter.task_ids`), gold calls their ground truth for the class
(`reference_calls`). The read sites come from BFCL's own `multi_turn_checker`, which after
every turn with ground truth runs two checks:

- the state check (`state_checker` → `_compare_instances`) compares every public attribute
  of each involved class's instance with the ground truth's, attribute by attribute with
  `!=`: the whole public state, one `whole_state` site anchored at the `getattr` that reads
  each attribute. (BFCL's `Directory.__eq__` ignores a directory's `parent`: a defect whose
  only field is a parent link would be counted exposed although the check cannot see it.)
- the response check (`response_checker`) requires the ground truth's results among the
  model's: a `transcript` site.

A site whose anchor is not found in the installed checker is `unresolved`, never nothing.
The shipped verdict of a path is that of the checker collapsed to the end of the path
(the path is one sequence of the class's calls, with no turns): the class's final public
state equal to that the gold calls leave with the tools as bound now (differential, as
shipped), and the gold calls' results among the path's.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import textwrap
from collections.abc import Sequence
from functools import cache
from typing import Any

from harness.targets.equality import canonical_equal
from harness.trace.paths import Call, CallRecord, PathRun
from harness.trace.readsites import Evaluator, ReadSite, SiteKind

CHECKER = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"
# check -> (function in the checker, the call in it that reads, what kind of site)
ANCHORS: dict[str, tuple[str, str, SiteKind, str]] = {
    "state": (
        "_compare_instances",
        "getattr",
        SiteKind.WHOLE_STATE,
        "every public attribute of the class compared with the ground truth's",
    ),
    "response": (
        "response_checker",
        "_is_subsequence_unordered",
        SiteKind.TRANSCRIPT,
        "the ground truth's results among the model's",
    ),
}


@cache
def anchor(check: str) -> str:
    """`module.function:line` of the reading call in the installed checker ('' if absent)."""
    function_name, call, _, _ = ANCHORS[check]
    module = importlib.import_module(CHECKER)
    function = getattr(module, function_name, None)
    if function is None:
        return ""
    lines, start = inspect.getsourcelines(function)
    for node in ast.walk(ast.parse(textwrap.dedent("".join(lines)))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == call:
                return f"{CHECKER}.{function_name}:{start + node.lineno - 1}"
    return ""


def _text(outcome: Any) -> str:
    if outcome.success:
        return json.dumps(outcome.result, sort_keys=True)
    return f"Error during execution: {outcome.error_message}"


class BfclTasks:
    """The multi_turn_base tasks of one BFCL class."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.name = adapter.name

    def task_ids(self) -> list[str]:
        return self.adapter.task_ids()

    def evaluators(self, task_id: str) -> list[Evaluator]:
        return []  # the checker is not one function per task: `read_sites` names its reads

    def live_state(self) -> Any:
        return self.adapter.fresh()

    def read_sites(self, task_id: str, live: Any) -> list[ReadSite]:
        sites = []
        for check, (function_name, call, kind, what) in ANCHORS.items():
            where = anchor(check)
            if where:
                sites.append(
                    ReadSite(kind, () if kind is SiteKind.WHOLE_STATE else None, where, what)
                )
            else:
                note = f"{call} not found in {function_name}"
                sites.append(ReadSite(SiteKind.UNRESOLVED, None, f"{check} check", note))
        return sorted(sites, key=lambda s: (s.kind, s.path or (), s.where, s.note))

    def gold_calls(self, task_id: str) -> list[Call]:
        return [Call(c.tool, dict(c.args)) for c in self.adapter.reference_calls(task_id)]

    def _replay(self, task_id: str, calls: Sequence[Call]) -> tuple[Any, list[CallRecord]]:
        env = self.adapter.task_environment(task_id)
        records = []
        for call in calls:
            before = self.adapter.snapshot(env)
            outcome = self.adapter.invoke(env, call.tool, copy.deepcopy(dict(call.args)))
            records.append(
                CallRecord(call.tool, dict(call.args), before, self.adapter.snapshot(env), outcome)
            )
        return env, records

    def run(self, task_id: str, calls: Sequence[Call]) -> PathRun:
        env, records = self._replay(task_id, calls)
        final = self.adapter.snapshot(env)
        gold_env, gold_records = self._replay(task_id, self.gold_calls(task_id))
        verdict = canonical_equal(final, self.adapter.snapshot(gold_env))
        results = [_text(r.outcome) for r in records]
        for record in gold_records:  # as response_checker: each gold result, used once
            text = _text(record.outcome)
            if text in results:
                results.remove(text)
            else:
                verdict = False
        return PathRun(records, final, bool(verdict))

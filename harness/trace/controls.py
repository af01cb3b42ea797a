"""Positive controls: a constructed path per repair, run against the unrepaired and the
repaired tool.

The construction (declared in the repair's YAML) keeps a gold action sequence unchanged and
inserts calls before its first call to an anchor tool, or appends them. It is applied to
every gold-call task of the defective tool; a task whose gold path lacks the anchor cannot
hold it, and is listed as such. Per (task, arm) the control records the shipped verdict (the
benchmark's own evaluator), the independent verdict (every violated clause the repair names,
evaluated on each call of the tool on the path; reported beside the shipped verdict, never
in its place); per task, whether the final state and the shipped verdict differ between arms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.targets.registry import Target
from harness.trace.clauses import clause_fails
from harness.trace.repairs import Construction, Repair, repaired
from harness.trace.suites import Call, PathRun, TaskSource


class ArmResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shipped_pass: bool
    independent_pass: bool | None  # None: a clause could not be evaluated on the path


class ControlRow(BaseModel):
    """One (task, construction), both arms."""

    model_config = ConfigDict(extra="forbid")
    target: str
    tool: str
    repair: str
    task: str
    construction: str
    calls: list[dict[str, Any]]
    unrepaired: ArmResult
    repaired: ArmResult
    state_changed: bool
    verdict_changed: bool


def construct(gold: list[Call], construction: Construction) -> list[Call] | None:
    """The gold path with the construction's calls in place; None if it cannot hold them."""
    if construction.before is None:
        anchor_index, anchor = (
            len(gold),
            next((c for c in reversed(gold) if c.tool == construction.calls[0].tool), None),
        )
    else:
        anchor_index = next((i for i, c in enumerate(gold) if c.tool == construction.before), -1)
        if anchor_index < 0:
            return None
        anchor = gold[anchor_index]
    inserted = []
    for call in construction.calls:
        args = {}
        for name, value in call.args.items():
            if isinstance(value, str) and value.startswith("$anchor."):
                key = value[len("$anchor.") :]
                if anchor is None or key not in anchor.args:
                    return None
                args[name] = anchor.args[key]
            else:
                args[name] = value
        inserted.append(Call(call.tool, args))
    return [*gold[:anchor_index], *inserted, *gold[anchor_index:]]


def _independent(target: Target, repair: Repair, run: PathRun) -> bool | None:
    contract = target.contracts[repair.spec.tool]
    masks = [*target.adapter.volatile_paths(), *contract.volatile]
    verdicts = [
        clause_fails(contract, clause, record, masks)
        for record in run.calls
        if record.tool == repair.spec.tool
        for clause in repair.spec.clauses
    ]
    if any(v is True for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def run_controls(
    target: Target,
    tasks: TaskSource,
    repair: Repair,
    gold_call_tasks: list[str],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[ControlRow], list[str]]:
    """(rows, tasks that could not hold the construction)."""
    construction = repair.spec.control
    assert construction is not None
    paths: dict[str, list[Call]] = {}
    cannot: list[str] = []
    for task in gold_call_tasks:
        path = construct(tasks.gold_calls(task), construction)
        if path is None:
            cannot.append(task)
        else:
            paths[task] = path
    unrepaired = {task: tasks.run(task, path) for task, path in paths.items()}
    with repaired(target, repair):
        fixed = {task: tasks.run(task, path) for task, path in paths.items()}
    rows = []
    for index, (task, path) in enumerate(paths.items()):
        before, after = unrepaired[task], fixed[task]
        rows.append(
            ControlRow(
                target=target.name,
                tool=repair.spec.tool,
                repair=repair.name,
                task=task,
                construction=construction.text,
                calls=[{"tool": c.tool, "args": c.args} for c in path],
                unrepaired=ArmResult(
                    shipped_pass=before.verdict,
                    independent_pass=_independent(target, repair, before),
                ),
                repaired=ArmResult(
                    shipped_pass=after.verdict, independent_pass=_independent(target, repair, after)
                ),
                state_changed=before.final != after.final,
                verdict_changed=before.verdict != after.verdict,
            )
        )
        if progress:
            progress(index + 1, len(paths))
    return rows, cannot

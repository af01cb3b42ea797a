"""A plan's recorded calls (`recorded_calls:`): the two halves of each target's corpus, drawn.

At draw time each target's corpus (`corpora/<target>.json`, `harness.targets.recorded`) is
split by task with the plan's `split_seed`: the calls of the liveness half join the liveness
corpus as recorded liveness calls (`harness.execution.liveness.recorded_call`), those of
the probe half go to the checker (`Target.recorded`), for the tools the drawn pairs touch.
Both are written into the drawn corpus, which the freeze hashes; the corpus files themselves
are hashed too (group `corpora`), and the split is recorded in the freeze. A target whose
adapter ships no tasks has no corpus and gets neither half.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.errors import Problem, UserError
from harness.execution.liveness import recorded_call
from harness.execution.plan import Plan
from harness.targets.adapter import TaskAdapter
from harness.targets.recorded import (
    Half,
    RecordedCall,
    corpus_path,
    half_calls,
    read_corpus,
    split_tasks,
)
from harness.targets.registry import Target

Calls = dict[str, dict[str, list[dict[str, Any]]]]  # target -> tool -> JSON records


def corpora_folder(plan: Plan, root: Path) -> Path | None:
    """The plan's corpora folder; inside the project root, so every clone hashes the same."""
    if plan.recorded_calls is None:
        return None
    folder = root / plan.recorded_calls.corpora
    if not folder.resolve().is_relative_to(root.resolve()):
        raise UserError(
            Problem(
                f"plans/{plan.name}.yaml",
                "recorded_calls.corpora",
                f"{plan.recorded_calls.corpora} lies outside the project root",
                "keep the corpora in a folder of the project (corpora)",
            )
        )
    return folder


def check_corpora(plan: Plan, root: Path, targets: Iterable[Target]) -> None:
    """Every corpus a draw of the plan reads is there (a post-hoc run checks the plan as
    a draw would, without reading the corpora: the drawn manifest holds their calls)."""
    folder = corpora_folder(plan, root)
    if folder is None:
        return
    for target in _with_tasks(targets):
        path = corpus_path(folder, target.name)
        if not path.is_file():
            raise UserError(
                Problem(
                    str(path),
                    "recorded_calls.corpora",
                    f"no recorded-call corpus for target {target.name}",
                    f"run `harness corpus record {target.name} --out {folder}`, or name the "
                    "folder that holds it",
                )
            )


def _with_tasks(targets: Iterable[Target]) -> list[Target]:
    return sorted((t for t in targets if isinstance(t.adapter, TaskAdapter)), key=lambda t: t.name)


def drawn_halves(
    plan: Plan, root: Path, targets: Iterable[Target], tools: Mapping[str, Iterable[str]]
) -> tuple[Calls, Calls]:
    """(recorded liveness calls, recorded probe calls) by target and tool, for `tools`
    (target -> the tools its drawn pairs touch); empty without `recorded_calls:`."""
    folder = corpora_folder(plan, root)
    if folder is None or plan.recorded_calls is None:
        return {}, {}
    seed = plan.recorded_calls.split_seed
    cap = plan.recorded_calls.liveness_per_tool
    liveness: Calls = {}
    probes: Calls = {}
    for target in _with_tasks(targets):
        corpus = read_corpus(folder, target.name)  # a missing corpus is a UserError
        wanted = set(tools.get(target.name, ()))
        halves: dict[Half, dict[str, list[RecordedCall]]] = {
            half: half_calls(corpus, seed, half) for half in ("liveness", "probe")
        }
        liveness[target.name] = {
            tool: [recorded_call(c) for c in _capped(calls, cap, seed)]
            for tool, calls in sorted(halves["liveness"].items())
            if tool in wanted
        }
        probes[target.name] = {
            tool: [c.model_dump(mode="json") for c in calls]
            for tool, calls in sorted(halves["probe"].items())
            if tool in wanted
        }
    return liveness, probes


def _capped(calls: list[RecordedCall], cap: int | None, seed: int) -> list[RecordedCall]:
    if cap is None or len(calls) <= cap:
        return calls

    def order(call: RecordedCall) -> str:
        return hashlib.sha256(f"{seed}:{call.tool}:{call.task}:{call.step}".encode()).hexdigest()

    chosen = set(map(id, sorted(calls, key=order)[:cap]))
    return [c for c in calls if id(c) in chosen]  # in (task, step) order


def _corpus_files(plan: Plan, root: Path) -> dict[str, Path]:
    """target -> its corpus file, for the plan's targets that have one."""
    folder = corpora_folder(plan, root)
    if folder is None:
        return {}
    paths = {name: corpus_path(folder, name) for name in plan.targets()}
    return {name: path for name, path in paths.items() if path.exists()}


def corpora_hashes(plan: Plan, root: Path) -> dict[str, str]:
    """path (relative to the root) -> SHA-256 of each corpus file the plan uses."""
    return {
        path.resolve().relative_to(root.resolve()).as_posix(): hashlib.sha256(
            path.read_bytes()
        ).hexdigest()
        for path in _corpus_files(plan, root).values()
    }


def corpus_split(plan: Plan, root: Path) -> dict[str, dict[str, list[str]]]:
    """target -> {liveness: tasks, probe: tasks}: the split a freeze records."""
    if plan.recorded_calls is None:
        return {}
    out: dict[str, dict[str, list[str]]] = {}
    for name, path in _corpus_files(plan, root).items():
        corpus = read_corpus(path.parent, name)
        halves = split_tasks(corpus.tasks, plan.recorded_calls.split_seed, name)
        out[name] = {half: list(tasks) for half, tasks in halves.items()}
    return out


def attach_probes(targets: Mapping[str, Target], probes: Calls) -> None:
    """Give each target the probe half drawn for it (the checker reads `Target.recorded`)."""
    for name, by_tool in probes.items():
        if name in targets:
            targets[name].recorded = {
                tool: [RecordedCall.model_validate(c) for c in calls]
                for tool, calls in by_tool.items()
            }

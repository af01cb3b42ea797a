"""Recorded-call corpora: the calls a benchmark's reference solutions make, replayed.

For a `TaskAdapter`, every task's reference calls are replayed in order from the task's own
initial environment (`task_environment`). A tool is *state-changing* on a target when some
reference call of it changed the (masked) snapshot; every call to such a tool is recorded
as (task, step, tool, arguments) with its *prefix*: the task's earlier reference calls
that reproduce the call's pre-state from the task's initial environment (only those that
changed the state when replaying them alone gives the same snapshot, checked at recording;
else all of them). The pre-state's hash is stored so a replay can be checked.

A corpus is one JSON file per target (`corpora/<target>.json`), with counts per tool and the
tools with no recorded call. Its tasks are split, seeded, into two halves that never meet:
one for the liveness corpus (the independent judge of `live`), one for the checker's probes.

Determinism: the replay runs under the fixed hash seed and AgentDojo's fixed clock (the
`harness` command sets both), and writes canonical JSON (sorted keys), so the same
installed benchmark gives the same bytes.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.errors import Problem, UserError, read_json_model
from harness.targets.adapter import Adapter, ReferenceCall, TaskAdapter
from harness.targets.equality import JSON, canonical_equal, mask_state, parse_pattern

CORPUS_SCHEMA_VERSION = 1
Half = Literal["liveness", "probe"]
HALVES: tuple[Half, Half] = ("liveness", "probe")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PrefixCall(_Frozen):
    tool: str
    args: dict[str, Any]


class RecordedCall(_Frozen):
    """One call to a state-changing tool from a task's reference solution."""

    task: str
    step: int = Field(description="index of the call among the task's reference calls")
    tool: str
    args: dict[str, Any]
    prefix: list[PrefixCall] = Field(
        description="calls that reproduce its pre-state from the task's initial environment: "
        "the task's earlier reference calls that changed the state, when replaying only them "
        "gives the same pre-state, else all of them"
    )
    pre_state_sha256: str = Field(description="canonical JSON of the masked pre-state")
    succeeded: bool = Field(description="whether the original tool accepted the call")
    changed_state: bool


class TargetCorpus(_Frozen):
    """The recorded calls of one target (one file under corpora/)."""

    schema_version: int = CORPUS_SCHEMA_VERSION
    target: str
    target_version: str
    tasks: list[str] = Field(description="every task replayed, sorted")
    state_changing_tools: list[str]
    counts: dict[str, int] = Field(description="recorded calls per tool of the target")
    tools_without_calls: list[str] = Field(
        description="tools of the target with a contract and no recorded call"
    )
    calls: list[RecordedCall]


def state_hash(state: JSON) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def _masks(adapter: Adapter) -> list[tuple[str, ...]]:
    return [parse_pattern(p) for p in adapter.volatile_paths()]


def task_adapter(adapter: Adapter) -> TaskAdapter:
    if not isinstance(adapter, TaskAdapter):
        raise UserError(
            Problem(
                adapter.name,
                "TaskAdapter",
                "the target's adapter ships no tasks (task_ids, task_environment, reference_calls)",
                "implement harness.targets.adapter.TaskAdapter (docs/adapters.md)",
            )
        )
    return adapter


def record(adapter: Adapter, contracted: Iterable[str]) -> TargetCorpus:
    """Replay every task of `adapter` and record the calls to its state-changing tools;
    `contracted`: the tools with a contract (a tool without calls is listed among them)."""
    tasks = task_adapter(adapter)
    masks = _masks(adapter)
    known = set(adapter.tool_names())
    replayed: list[tuple[str, int, ReferenceCall, list[ReferenceCall], JSON, bool, bool]] = []
    changing: set[str] = set()
    task_ids = sorted(tasks.task_ids())
    for task in task_ids:
        calls = [c for c in tasks.reference_calls(task) if c.tool in known]
        env = tasks.task_environment(task)
        pre = mask_state(adapter.snapshot(env), masks)
        changed_steps: list[ReferenceCall] = []  # the calls so far that changed the state
        for step, call in enumerate(calls):
            outcome = adapter.invoke(env, call.tool, copy.deepcopy(call.args))
            post = mask_state(adapter.snapshot(env), masks)
            changed = not canonical_equal(pre, post)
            if changed:
                changing.add(call.tool)
            prefix = _shortest_prefix(adapter, task, calls[:step], changed_steps, pre, masks)
            replayed.append((task, step, call, prefix, pre, outcome.success, changed))
            if changed:
                changed_steps.append(call)
            pre = post
    recorded = [
        RecordedCall(
            task=task,
            step=step,
            tool=call.tool,
            args=dict(call.args),
            prefix=[PrefixCall(tool=p.tool, args=dict(p.args)) for p in prefix],
            pre_state_sha256=state_hash(pre),
            succeeded=succeeded,
            changed_state=changed,
        )
        for task, step, call, prefix, pre, succeeded, changed in replayed
        if call.tool in changing
    ]
    counts = {tool: sum(1 for c in recorded if c.tool == tool) for tool in sorted(known)}
    return TargetCorpus(
        target=adapter.name,
        target_version=adapter.version(),
        tasks=task_ids,
        state_changing_tools=sorted(changing),
        counts=counts,
        tools_without_calls=sorted(t for t in contracted if counts.get(t, 0) == 0),
        calls=recorded,
    )


def _shortest_prefix(
    adapter: Adapter,
    task: str,
    full: list[ReferenceCall],
    changing: list[ReferenceCall],
    pre: JSON,
    masks: list[tuple[str, ...]],
) -> list[ReferenceCall]:
    """The earlier calls that changed the state, when replaying only them reproduces the
    pre-state (checked on a new task environment); else every earlier call. Read-only calls
    (a flight search that reads every record) cost a probe much and change nothing."""
    if len(changing) == len(full):
        return full
    env = task_adapter(adapter).task_environment(task)
    for call in changing:
        adapter.invoke(env, call.tool, copy.deepcopy(call.args))
    same = canonical_equal(mask_state(adapter.snapshot(env), masks), pre)
    return list(changing) if same else full


def corpus_path(folder: Path, target: str) -> Path:
    return folder / f"{target}.json"


def write_corpus(folder: Path, corpus: TargetCorpus) -> Path:
    path = corpus_path(folder, corpus.target)
    payload = json.dumps(corpus.model_dump(mode="json"), sort_keys=True, indent=1)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(payload + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_corpus(folder: Path, target: str) -> TargetCorpus:
    path = corpus_path(folder, target)
    if not path.exists():
        raise UserError(
            Problem(
                str(path),
                "corpus",
                f"no recorded-call corpus for target {target}",
                f"run `harness corpus record {target} --out {folder}`",
            )
        )
    return read_json_model(
        path,
        TargetCorpus,
        f"restore it from git, or `harness corpus record {target} --out {folder}`",
    )


def split_tasks(tasks: Iterable[str], seed: int, target: str) -> dict[Half, list[str]]:
    """The tasks in two halves that never meet: ordered by SHA-256 of (seed, target, task),
    the first ceil(n/2) to the liveness corpus, the rest to the probes. Each half sorted."""
    ordered = sorted(
        set(tasks), key=lambda t: hashlib.sha256(f"{seed}:{target}:{t}".encode()).hexdigest()
    )
    cut = (len(ordered) + 1) // 2
    return {"liveness": sorted(ordered[:cut]), "probe": sorted(ordered[cut:])}


def half_calls(corpus: TargetCorpus, seed: int, half: Half) -> dict[str, list[RecordedCall]]:
    """tool -> the recorded calls of `half`'s tasks, in (task, step) order."""
    tasks = set(split_tasks(corpus.tasks, seed, corpus.target)[half])
    out: dict[str, list[RecordedCall]] = {}
    for call in corpus.calls:
        if call.task in tasks:
            out.setdefault(call.tool, []).append(call)
    return out


def pre_state(adapter: Adapter, call: RecordedCall) -> Any:
    """A new environment in `call`'s pre-state: the task's initial environment after its
    prefix, with the tools as currently bound (a mutant in the prefix changes the state)."""
    env = task_adapter(adapter).task_environment(call.task)
    for step in call.prefix:
        adapter.invoke(env, step.tool, copy.deepcopy(step.args))  # the corpus never changes
    return env


def attach_probe_half(target: Any, folder: Path, seed: int) -> None:
    """Give `target` (a `Target`) the probe half of its corpus in `folder`, for the checker."""
    target.recorded = half_calls(read_corpus(folder, target.name), seed, "probe")

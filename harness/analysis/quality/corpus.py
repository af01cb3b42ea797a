"""Probe corpora: calls written down once, in a file, so that coverage and agreement read
the same calls and anyone can check which calls those were (the file's sha256).

A probe is (target, tool, args) with the setup calls that prepare its pre-state from a
fresh environment, and the kind that produced it. Run, it gives (pre, post, args, result).

Generated probes come from a contract the way the checker's own probes do (the same
argument pools and precondition search of `harness.checker.probes`): `happy` (every
precondition true), `violate:<pre>` (that precondition false, the others true),
`variant:<arg>` (up to two legal values of an effective argument other than the happy
one's). From a fresh environment; given the target's other contracts (`partners`, as
coverage does), a probe no fresh assignment gives is looked for after one legal call of
another tool, as the checker's setup starts do (`harness contracts corpus` does not, so
the committed agreement corpus is rebuilt byte for byte).

A recorded call of the recorded-calls corpora is a probe whose task's initial environment
and reproducing prefix are its start: a recorded-call corpus file (`corpora/<target>.json`
of the recorded-calls issue) is read as such probes wherever a corpus is (`--corpus`,
`--recorded`), kind `recorded`.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.checker.probes import AssignmentSearch, argument_pools, compile_contract
from harness.contracts.model import Contract
from harness.contracts.predicate import PredicateRuntimeError
from harness.errors import Problem, UserError
from harness.targets.adapter import Adapter, InvokeOutcome
from harness.targets.equality import JSON, canonical_equal, canonical_key, mask_state, parse_pattern

CORPUS_SCHEMA_VERSION = 1
VARIANTS_PER_ARGUMENT = 2


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SetupCall(_Strict):
    tool: str
    args: dict[str, Any]


class Probe(_Strict):
    target: str
    tool: str
    kind: str = Field(description="happy, violate:<clause>, variant:<arg>, recorded")
    args: dict[str, Any]
    task: str | None = Field(
        default=None, description="start from this task's initial environment, not a fresh one"
    )
    setup: list[SetupCall] = Field(default_factory=list)
    source: str = Field(default="", description="which contract set or corpus produced it")

    def key(self) -> str:
        """Identity for de-duplication: the call and its setup, not who proposed it."""
        return canonical_key(
            [self.target, self.tool, self.args, self.task, [[s.tool, s.args] for s in self.setup]]
        )


class ProbeCorpus(_Strict):
    schema_version: Literal[1] = CORPUS_SCHEMA_VERSION
    built_by: str = Field(description="how the corpus was built, in a sentence")
    seed: int = 0
    probes: list[Probe]

    def for_tool(self, target: str, tool: str) -> list[Probe]:
        return [p for p in self.probes if p.target == target and p.tool == tool]


def corpus_bytes(corpus: ProbeCorpus) -> bytes:
    return (json.dumps(corpus.model_dump(mode="json"), indent=1, sort_keys=True) + "\n").encode()


def corpus_hash(corpus: ProbeCorpus) -> str:
    return hashlib.sha256(corpus_bytes(corpus)).hexdigest()


def write_corpus(corpus: ProbeCorpus, path: Path) -> str:
    """Write the corpus; return the sha256 of the bytes written."""
    data = corpus_bytes(corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


class _RecordedCall(BaseModel):
    """The fields of a recorded call (issue 27's `harness.targets.recorded.RecordedCall`)
    that make it a probe; the others are ignored here."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    task: str
    tool: str
    args: dict[str, Any]
    prefix: list[SetupCall]


class _RecordedCorpus(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    target: str
    calls: list[_RecordedCall]


def from_recorded(data: bytes, source: str) -> ProbeCorpus:
    """A recorded-call corpus file (`corpora/<target>.json`) as probes: each recorded call
    from its task's initial environment, its prefix as setup, kind `recorded`."""
    recorded = _RecordedCorpus.model_validate_json(data)
    probes = [
        Probe(
            target=recorded.target,
            tool=c.tool,
            kind="recorded",
            args=c.args,
            task=c.task,
            setup=c.prefix,
            source=source,
        )
        for c in recorded.calls
    ]
    return merge([probes], built_by=f"the recorded calls of {source}", seed=0)


def read_corpus(path: Path) -> tuple[ProbeCorpus, str]:
    """The corpus (a probe corpus, or a recorded-call corpus read as probes) and the sha256
    of the file's bytes."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(
            Problem(str(path), "file", str(exc), "give an existing corpus file")
        ) from None
    try:
        if b'"calls"' in data and b'"probes"' not in data:
            return from_recorded(data, str(path)), hashlib.sha256(data).hexdigest()
        corpus = ProbeCorpus.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "corpus"
        raise UserError(
            Problem(str(path), where, first["msg"], "write a corpus `harness` built")
        ) from None
    return corpus, hashlib.sha256(data).hexdigest()


def merge(corpora: Iterable[Sequence[Probe]], built_by: str, seed: int) -> ProbeCorpus:
    """One corpus holding each distinct call once (first proposer kept), in a stable order."""
    seen: dict[str, Probe] = {}
    for probes in corpora:
        for probe in probes:
            seen.setdefault(probe.key(), probe)
    ordered = sorted(seen.values(), key=lambda p: (p.target, p.tool, p.key()))
    return ProbeCorpus(built_by=built_by, seed=seed, probes=ordered)


def _hints(adapter: Adapter, tool: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(adapter.tool_function(tool))
    except Exception:  # unresolvable annotations: every harvested value stays a candidate
        return {}


@dataclass(frozen=True)
class _Start:
    setup: tuple[SetupCall, ...]
    pools: dict[str, list[JSON]]
    search: AssignmentSearch


def _starts(
    adapter: Adapter,
    contract: Contract,
    seed: int,
    partners: Mapping[str, Contract],
) -> Iterator[_Start]:
    """The fresh environment, then (as the checker's setup starts) the state after one legal
    call of each partner tool, in name order, that said it succeeded and changed the state."""
    volatile = tuple(adapter.volatile_paths())
    compiled = compile_contract(contract, volatile)
    masks = [parse_pattern(p) for p in compiled.volatile]
    initial = mask_state(adapter.snapshot(adapter.fresh()), masks)

    def start(state: JSON, setup: tuple[SetupCall, ...]) -> _Start:
        pools = argument_pools(
            compiled, state, seed, contract.tool, hints=_hints(adapter, contract.tool)
        )
        return _Start(setup, pools, AssignmentSearch(compiled, pools, state))

    yield start(initial, ())
    for name, partner in sorted(partners.items()):
        other = compile_contract(partner, volatile)
        state = mask_state(
            adapter.snapshot(adapter.fresh()), [parse_pattern(p) for p in other.volatile]
        )
        pools = argument_pools(other, state, seed, name, hints=_hints(adapter, name))
        args = AssignmentSearch(other, pools, state).find()
        if args is None:
            continue
        env = adapter.fresh()
        outcome = adapter.invoke(env, name, copy.deepcopy(args))
        post = mask_state(adapter.snapshot(env), masks)
        said = outcome.success and (
            other.success is None or _holds(other.success, {"result": outcome.result, "args": args})
        )
        if said and not canonical_equal(post, initial):
            yield start(post, (SetupCall(tool=name, args=args),))


def _holds(predicate: Any, bindings: Mapping[str, JSON]) -> bool:
    try:
        return bool(predicate.holds(bindings))
    except PredicateRuntimeError:
        return False


def generate_probes(
    adapter: Adapter,
    contract: Contract,
    seed: int,
    source: str,
    partners: Mapping[str, Contract] | None = None,
) -> list[Probe]:
    """happy, violate:<pre> and variant:<arg> probes (module doc). Without `partners`, from
    a fresh environment only; with them, a probe no fresh assignment gives is looked for
    after one legal call of a partner, as the checker does."""
    starts = _starts(adapter, contract, seed, partners or {})
    opened: list[_Start] = []

    def find(**kw: Any) -> tuple[_Start, dict[str, JSON]] | None:
        for i in itertools.count():
            if i == len(opened):
                nxt = next(starts, None)
                if nxt is None:
                    return None
                opened.append(nxt)
            found = opened[i].search.find(**kw)
            if found is not None:
                return opened[i], found
        return None

    def probe(kind: str, args: dict[str, JSON], at: _Start) -> Probe:
        return Probe(
            target=adapter.name,
            tool=contract.tool,
            kind=kind,
            args=args,
            setup=list(at.setup),
            source=source,
        )

    out: list[Probe] = []
    found = find()
    happy = found[1] if found else None
    if found is not None:
        out.append(probe("happy", found[1], found[0]))
    for clause in contract.preconditions:
        violating = find(falsify=clause.id, prefer=happy)
        if violating is not None:
            out.append(probe(f"violate:{clause.id}", violating[1], violating[0]))
    if found is not None:
        at, happy_args = found
        for arg in contract.arguments:
            name = arg.argument
            variants = 0
            for value in at.pools.get(name, []):
                if variants >= VARIANTS_PER_ARGUMENT:
                    break
                args = {**happy_args, name: value}
                if canonical_equal(value, happy_args[name]) or not at.search.is_legal(args):
                    continue
                variants += 1
                out.append(probe(f"variant:{name}", args, at))
    return out


@dataclass(frozen=True)
class ProbeOutcome:
    """A probe run from a fresh environment: unmasked snapshots (each side masks its own)."""

    probe: Probe
    pre: JSON
    post: JSON
    outcome: InvokeOutcome


def run_probe(adapter: Adapter, probe: Probe) -> ProbeOutcome:
    if probe.task is not None:
        task_environment = getattr(adapter, "task_environment", None)
        if task_environment is None:
            raise UserError(
                Problem(
                    probe.target,
                    f"task {probe.task}",
                    "the adapter has no tasks",
                    "drop the probe's task, or use an adapter with task_environment",
                )
            )
        env = task_environment(probe.task)
    else:
        env = adapter.fresh()
    for call in probe.setup:
        adapter.invoke(env, call.tool, copy.deepcopy(call.args))
    pre = adapter.snapshot(env)
    # a tool may change a list it was passed in place: the probe's own args stay as written
    outcome = adapter.invoke(env, probe.tool, copy.deepcopy(probe.args))
    return ProbeOutcome(probe, pre, adapter.snapshot(env), outcome)

"""Scoring one pair, wherever it runs: the `RunContext` prepared once per process (targets,
baseline verdicts, liveness observations, grader verdicts and, with coverage-guided scoring,
what each pair may take from the original), `score_pair` -> `PairScore`, and what an
executor is given (`RunJob`) and reports (`PairOutcome`). Executors import this module; the
runner hands them the pairs, so no arrow points back.

Whatever was run and whatever was taken from the original (`harness.execution.coverage`),
one function decides the row (`_decide`), so a pair scores the same either way."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from harness.checker.verdicts import ToolReport, Verdict
from harness.execution.atomic import write_bytes
from harness.execution.coverage import (
    NOTHING,
    ClockWindow,
    CodeNames,
    EvaluationCoverage,
    OriginalHeads,
    Reuse,
    ToolCoverage,
    definition_unchanged,
    executed_code,
    fingerprint,
    record_tool,
    reuse_for,
    site_function,
)
from harness.execution.draw import Corpus, DrawnPair
from harness.execution.freeze import (
    checker_for,
)
from harness.execution.ledger import (
    MissCause,
    NewViolation,
    PairScore,
    PairStatus,
)
from harness.execution.liveness import (
    OBSERVATION_FIELDS,
    Observation,
    compare,
    kill_vector_of,
    observe,
)
from harness.execution.miss_cause import changes_of, clause_patterns, miss_cause
from harness.execution.negative_controls import patched_contract
from harness.execution.plan import Plan
from harness.execution.recorded_calls import attach_probes
from harness.execution.run_folder import read_verified_json, record_digest
from harness.execution.setup_cache import SetupCache, content_digest, shared, unshared
from harness.execution.setup_helpers import compute_in_helpers
from harness.targets.adapter import GraderAdapter, SplitGrader, splits
from harness.targets.equality import canonical_equal
from harness.targets.registry import Target, load_target

T = TypeVar("T")


@dataclass
class RunContext:
    """Everything a child needs, prepared once in the parent and inherited by fork."""

    plan: Plan
    freeze_id: str
    post_hoc: bool
    corpus: Corpus
    targets: dict[str, Target]
    checker: Any
    baselines: dict[tuple[str, str], ToolReport] = field(default_factory=dict)
    observations: dict[tuple[str, str], list[Observation]] = field(default_factory=dict)
    grades: dict[tuple[str, str], bool] = field(default_factory=dict)  # (target, task) -> utility
    skip_by_coverage: bool = False  # take what a mutant cannot change from the original
    coverage: dict[tuple[str, str], ToolCoverage] = field(default_factory=dict)
    # (target, task) -> the fingerprint of the original's evaluation inputs (a SplitGrader)
    evaluation_keys: dict[tuple[str, str], bytes | None] = field(default_factory=dict)
    # (target, task) -> the functions its evaluation starts on the original (a SplitGrader)
    evaluations: dict[tuple[str, str], frozenset[str] | None] = field(default_factory=dict)
    reuse: dict[str, Reuse] = field(default_factory=dict)  # pair id -> runs taken from the original
    setup: SetupCache | None = None  # the freeze's set-up cache (`harness.execution.setup_cache`)
    # set-up read, not computed, in this process: each target is warmed before the first
    # child that scores one of its pairs is forked, while no pair is scored (`warm_for`)
    cold: bool = False
    warmed: set[tuple[str, str]] = field(default_factory=set)  # (target, tool) by `_warm_up`

    def checker_label(self) -> str:
        return f"{self.checker.name} {self.checker.version}"

    def drop_targets(self, names: set[str], pair_ids: list[str]) -> None:
        """Forget the set-up of targets `names` (every table keyed by (target, ...)) and
        the reuse of `pair_ids`."""
        for table in vars(self).values():  # a table added later is covered as well
            if not isinstance(table, dict | set):
                continue
            for key in [k for k in table if isinstance(k, tuple) and k[0] in names]:
                if isinstance(table, set):
                    table.discard(key)
                else:
                    del table[key]
        for pair_id in pair_ids:
            self.reuse.pop(pair_id, None)


@dataclass(frozen=True)
class PreparedSetup:
    """A context's set-up on the original tools, as the Dask client sends it to its batch
    hosts: prepared once for the whole run (and taken from the freeze's set-up cache), so a
    host scores with the same original outcomes and coverage reuse as the local executor,
    and prepares nothing itself."""

    baselines: dict[tuple[str, str], ToolReport]
    observations: dict[tuple[str, str], list[Observation]]
    grades: dict[tuple[str, str], bool]
    skip_by_coverage: bool
    evaluation_keys: dict[tuple[str, str], bytes | None]
    evaluations: dict[tuple[str, str], frozenset[str] | None]
    reuse: dict[str, Reuse]

    @classmethod
    def of(cls, ctx: RunContext) -> PreparedSetup:
        return cls(
            ctx.baselines,
            ctx.observations,
            ctx.grades,
            ctx.skip_by_coverage,
            ctx.evaluation_keys,
            ctx.evaluations,
            ctx.reuse,
        )

    def into(self, ctx: RunContext) -> None:
        ctx.baselines, ctx.grades = self.baselines, self.grades
        pristine: dict[str, Pristine] = {}
        ctx.observations = {  # unpickled copies: linked to this process's fresh records
            key: _relinked(found, _pristine(pristine, ctx.targets[key[0]]).records)
            for key, found in self.observations.items()
        }
        ctx.skip_by_coverage = self.skip_by_coverage
        ctx.evaluation_keys, ctx.evaluations = self.evaluation_keys, self.evaluations
        ctx.reuse = self.reuse


@dataclass(frozen=True)
class RunJob:
    """What an executor is given besides the pairs: the verified plan and its run."""

    plan_path: Path
    plan: Plan
    root: Path
    run_id: str  # the run folder's name: the freeze id (+ .checker for a comparison checker)
    post_hoc: bool
    corpus: Corpus
    folder: Path
    freeze_id: str  # every row's: the freeze id, or posthoc-<id of the current inputs>
    checker: str | None  # a comparison checker of the plan; None: the plan's checker
    hashes: dict[str, dict[str, str]]  # the inputs as verified (freeze.current_inputs)
    versions: dict[str, str]  # target versions as verified
    skip_by_coverage: bool = True  # harness.execution.coverage; the rows are the same either way
    # called once the set-up is prepared, with what it took from where (run.json's `setup`)
    on_prepared: Callable[[dict[str, Any]], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class PairOutcome:
    """One scored pair as it crosses from a worker to the ledger writer."""

    pair_id: str
    score: PairScore  # what scoring decided; see score_pair
    started_at: str
    seconds: float


class Executor(Protocol):
    """Scores pairs somewhere and reports each outcome to `on_outcome`, in the calling
    thread; it may report a pair more than once (the caller keeps the first)."""

    def describe(self) -> dict[str, Any]: ...  # run.json fields: executor, workers...

    def run(
        self, job: RunJob, pairs: list[DrawnPair], on_outcome: Callable[[PairOutcome], None]
    ) -> None: ...


def new_context(
    plan: Plan,
    freeze_id: str,
    post_hoc: bool,
    liveness: dict[str, Any],
    corpus: Corpus | None,
    checker: str | None = None,
    recorded_probes: dict[str, Any] | None = None,
) -> RunContext:
    """A context with targets and checker loaded; `complete_context` adds what pairs need."""
    if corpus is None:  # a Dask worker gets the liveness and recorded calls, not the corpus
        corpus = Corpus(
            plan=plan.name,
            seed=plan.seed,
            pairs=[],
            liveness=liveness,
            recorded_probes=recorded_probes or {},
        )
    targets = {t.name: t for t in map(load_target, plan.targets())}  # as mutants name them
    attach_probes(targets, corpus.recorded_probes)  # the checker's half of the recorded calls
    return RunContext(plan, freeze_id, post_hoc, corpus, targets, checker_for(plan, checker))


def complete_baselines(
    ctx: RunContext, pairs: list[DrawnPair], cache: Path | None
) -> list[tuple[str, str]]:
    """The baseline verdicts of the original tools the pairs touch (cached in the JSON file
    `cache` when given); returns those (target, tool) keys."""
    keys = list(dict.fromkeys((p.mutant.target, p.tool) for p in pairs))
    # verified against the digest recorded when it was written (an edit is refused)
    cached: dict[str, Any] = (read_verified_json(cache) or {}) if cache is not None else {}
    for name, tool in keys:
        if (name, tool) in ctx.baselines:
            continue
        label = f"{name}:{tool}"
        if label in cached:
            ctx.baselines[(name, tool)] = ToolReport.model_validate(cached[label])
            _tally(ctx, "from_run_folder", "baseline")
            continue
        parts = _baseline_parts(ctx, name, tool)
        report = _cached(ctx, "baseline", parts, ToolReport.model_validate)
        if report is None:
            report = ctx.checker.check(ctx.targets[name], [tool]).tool(tool)
            _tally(ctx, "computed", "baseline")
            _store(ctx, "baseline", parts, report.model_dump(mode="json"))
        ctx.baselines[(name, tool)] = report
        cached[label] = report.model_dump(mode="json")
    if cache is not None:
        _write_json(cache, cached)
    return keys


def _baseline_parts(ctx: RunContext, name: str, tool: str) -> dict[str, Any]:
    """The key parts of what the checker computed on a tool (its baseline, coverage record
    and reuse): the checker, the target and the tool."""
    return {"checker": ctx.checker_label(), "target": name, "tool": tool}


def _lacks_baseline(
    ctx: RunContext, in_folder: dict[str, Any], name: str, pairs: list[DrawnPair]
) -> bool:
    """Whether the set-up of target `name` for `pairs` is to be computed: a tool's baseline,
    the first entry of a tool's set-up, is neither in the run folder nor in the set-up
    cache (any other entry missing, the run computes itself)."""
    assert ctx.setup is not None
    return any(
        f"{name}:{tool}" not in in_folder
        and not ctx.setup.path(
            "baseline", _process_parts(_baseline_parts(ctx, name, tool))
        ).exists()
        for tool in dict.fromkeys(pair.tool for pair in pairs)
    )


def write_baseline(job: RunJob, pairs: list[DrawnPair]) -> None:
    """The run folder's baseline.json for an executor whose workers keep their baselines
    to themselves (Dask): computed here, once per tool, as the local executor does."""
    ctx = new_context(
        job.plan, job.freeze_id, job.post_hoc, job.corpus.liveness, job.corpus, job.checker
    )
    complete_baselines(ctx, pairs, job.folder / "baseline.json")


def prepared_context(job: RunJob, pairs: list[DrawnPair], helpers: int = 1) -> RunContext:
    """The run's context, complete for `pairs`, as every executor prepares it in the process
    that called `harness run`: the run folder's baseline.json and coverage.json written, and
    the set-up taken from (or added to) the freeze's set-up cache; with `helpers` > 1, what
    the cache lacks computed first by target in that many processes
    (`harness.execution.setup_helpers`)."""
    ctx = new_context(
        job.plan, job.freeze_id, job.post_hoc, job.corpus.liveness, job.corpus, job.checker
    )
    ctx.skip_by_coverage = job.skip_by_coverage
    ctx.setup = SetupCache.for_run(job.root, job.freeze_id)  # set-up once per freeze
    began = time.monotonic()
    if helpers > 1 and _hash_seed_fixed():  # only a cache the run trusts carries their work
        in_folder = read_verified_json(job.folder / "baseline.json") or {}
        needed = partial(_lacks_baseline, ctx, in_folder)
        helped = compute_in_helpers(ctx, pairs, helpers, needed, _completed_and_dropped)
        if helped is not None:
            ctx.setup.adopt(helped.processes, helped.stored, helped.refused, helped.written)
    # only what the pairs to score need: rows depend on the original tool alone, so a
    # resumed run prepares less and scores the same
    complete_context(ctx, pairs, job.folder / "baseline.json")
    summary = {"seconds": round(time.monotonic() - began, 2), **ctx.setup.summary()}
    if not _hash_seed_fixed():
        summary["cache"] = "not used: PYTHONHASHSEED is not fixed"
    _step(f"done in {summary['seconds']:.1f} s; {_where(summary)}")
    if job.on_prepared is not None:
        job.on_prepared(summary)
    return ctx


def _completed_and_dropped(ctx: RunContext, pairs: list[DrawnPair], cache: Path | None) -> None:
    """In a set-up helper: `complete_context` for one target's pairs (into the set-up
    cache), then that target's set-up dropped from the helper's context, so a helper holds
    one target's at a time. The run reads it back from the cache, and no other target's
    set-up depends on it (every entry's key parts name its target)."""
    try:
        complete_context(ctx, pairs, cache)
    finally:
        ctx.drop_targets({pair.mutant.target for pair in pairs}, [p.pair_id for p in pairs])


SETUP_LOG = logging.getLogger("harness.setup")  # `harness run` prints these lines


def _step(text: str) -> None:
    """A line on the run's set-up, for whoever listens (`harness run`: its progress)."""
    SETUP_LOG.info("%s", text)


def _many(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _tally(ctx: RunContext, where: str, kind: str) -> None:
    """Count one entry of the set-up as taken `from_run_folder` or `computed` (a run
    without a set-up cache counts nothing)."""
    if ctx.setup is not None:
        ctx.setup.tally(getattr(ctx.setup, where), kind)


def _where(summary: dict[str, Any]) -> str:
    """`summary`'s counts in words: "baseline 40, grade 12 from the set-up cache; ..."."""
    said = []
    for label, field_name in (
        ("from the set-up cache", "from_cache"),
        ("from the run folder", "from_run_folder"),
        ("computed", "computed"),
        ("refused and recomputed", "refused"),
    ):
        counts = summary[field_name]
        if counts:
            said.append(", ".join(f"{k} {v}" for k, v in counts.items()) + f" {label}")
    return "; ".join(said) or "nothing to prepare"


def complete_context(ctx: RunContext, pairs: list[DrawnPair], cache: Path | None) -> None:
    """Baselines (cached in the JSON file `cache` when given), liveness observations and
    grader verdicts of the original tools the pairs touch, each computed once per context;
    with `ctx.skip_by_coverage`, what their runs start (cached in coverage.json beside
    `cache`), the fingerprints of their evaluation inputs, and what each pair may take from
    the original (`harness.execution.coverage`)."""
    tools = dict.fromkeys((p.mutant.target, p.tool) for p in pairs)
    targets = len({name for name, _ in tools})
    of = f"{_many(len(tools), 'tool')} of {_many(targets, 'target')}"
    _step(f"baselines: the checker on each original tool ({of})")
    keys = complete_baselines(ctx, pairs, cache)
    _step("liveness calls on the original tools")
    pristine: dict[str, Pristine] = {}  # target -> its fresh snapshot
    for name, tool in keys:
        calls = ctx.corpus.liveness.get(name, {}).get(tool)
        if (name, tool) not in ctx.observations and calls is not None:
            fresh = _pristine(pristine, ctx.targets[name])
            parts = {"target": name, "tool": tool, "calls": content_digest(calls)}
            parts["fresh"] = fresh.digest  # what the entry's references to records point at
            found = _cached(ctx, "observations", parts, partial(_observations, fresh=fresh))
            if found is None:
                found = observe(ctx.targets[name].adapter, tool, calls)
                _tally(ctx, "computed", "observations")
                encode = partial(_shared_observations, fresh=fresh)
                _store(ctx, "observations", parts, found, encode)
            ctx.observations[(name, tool)] = found
    path = None if cache is None else cache.with_name(COVERAGE)
    cached = _read_coverage(path) if ctx.skip_by_coverage else {}
    names = _code_names(ctx, pairs)
    _step("grader verdicts of the original tools' tasks")
    for name, tool in keys:
        adapter = ctx.targets[name].adapter
        for task in _grader_tasks(adapter, tool):
            if (name, task) in ctx.grades:
                continue
            if ctx.skip_by_coverage and splits(adapter):
                parts = {"target": name, "task": task, "packages": sorted(names[name].packages)}
                split = _cached(ctx, "split_grade", parts, _split_entry)
                if split is None:
                    known = cached["evaluations"].get(f"{name}:{task}")
                    record = None if known is None else EvaluationCoverage.model_validate(known)
                    if record is not None and record.packages != sorted(names[name].packages):
                        record = None
                    split = _split_grade(adapter, task, names[name], record)
                    _tally(ctx, "computed", "split_grade")
                    grade, key, started = split
                    entry = {"grade": grade, "fingerprint": key.hex() if key else None}
                    _store(ctx, "split_grade", parts, entry | {"functions": sorted(started)})
                grade, key, started = split
                ctx.grades[(name, task)], ctx.evaluation_keys[(name, task)] = grade, key
                ctx.evaluations[(name, task)] = started
            else:
                parts = {"target": name, "task": task}
                found = _cached(ctx, "grade", parts, _bool)
                if found is None:
                    found = adapter.grade(task)
                    _tally(ctx, "computed", "grade")
                    _store(ctx, "grade", parts, found)
                ctx.grades[(name, task)] = found
    if ctx.skip_by_coverage:
        _step("coverage: what each original tool's runs start")
        complete_coverage(ctx, pairs, keys, names, cached, path)
    if ctx.setup is not None and (ctx.setup.hits or ctx.setup.fresh):
        ctx.cold = True  # warmed target by target as the pairs reach their children


def owes_warm_up(ctx: RunContext, pair: DrawnPair) -> bool:
    """Whether `pair`'s target must be warmed (`warm_for`) before a child scores the pair."""
    return ctx.cold and (pair.mutant.target, pair.tool) not in ctx.warmed


def warm_for(ctx: RunContext, pair: DrawnPair) -> bool:
    """`_warm_up` for every tool of `pair`'s target this context prepared, once, in a process
    whose set-up was read (from the freeze's cache, or the Dask client's) rather than
    computed; True when it ran. The executor calls it just before forking the pair's child
    and while no pair is being scored (`executors.score_pairs`)."""
    if not owes_warm_up(ctx, pair):
        return False
    name = pair.mutant.target
    tools = [key for key in ctx.baselines if key[0] == name] + [(name, pair.tool)]
    _warm_up(ctx, list(dict.fromkeys(tools)))
    return True


def _warm_up(ctx: RunContext, keys: list[tuple[str, str]]) -> None:
    """After a set-up taken from the cache (or from the Dask client), what computing it
    would have left warm in this process for the forked pairs of `keys` to inherit, at the
    cost of one run of each kind: the checker's run of one tool per target (its compiled
    contracts), the first liveness call of each tool, and one grader task per target (its
    suite's data). Without it each pair paid them itself (bench/overhead.py)."""
    warmed = {name for name, _ in ctx.warmed}
    for name, tool in keys:
        if (name, tool) in ctx.warmed:
            continue
        ctx.warmed.add((name, tool))
        target = ctx.targets[name]
        calls = ctx.corpus.liveness.get(name, {}).get(tool) or []
        observe(target.adapter, tool, calls[:1])
        if name in warmed:
            continue
        warmed.add(name)
        # its recorded probes cut to one: the rest warm nothing the first did not
        first = {t: calls[:1] for t, calls in target.recorded.items()}
        with contextlib.suppress(Exception):  # the run is computed for its side effects only
            ctx.checker.check(dataclasses.replace(target, recorded=first), [tool])
        tasks = _grader_tasks(target.adapter, tool)
        if tasks:
            with contextlib.suppress(Exception):
                target.adapter.grade(tasks[0])


COVERAGE = "coverage.json"


def _cached(
    ctx: RunContext,
    kind: str,
    parts: dict[str, Any],
    decode: Callable[[Any], T],
    serves: Callable[[T], bool] | None = None,
) -> T | None:
    """The set-up cache's verified entry (one that `serves`, when given), when the context
    has a cache and may trust one: only under a fixed hash seed are the original's outcomes
    the same in another process."""
    if ctx.setup is None or not _hash_seed_fixed():
        return None
    return ctx.setup.get(kind, _process_parts(parts), decode, serves)


def _store(
    ctx: RunContext,
    kind: str,
    parts: dict[str, Any],
    value: Any,
    encode: Callable[[Any], Any] | None = None,
) -> None:
    """Put `value` (`encode(value)` when given, computed only here) in the set-up cache,
    when the context has one and may trust it; a value that is not JSON is not stored."""
    if ctx.setup is None or not _hash_seed_fixed():
        return
    if encode is not None:
        try:
            value = encode(value)
        except (TypeError, ValueError):  # not JSON (NaN, a set): never cached, as put() refuses
            return
    ctx.setup.put(kind, _process_parts(parts), value)


def _hash_seed_fixed() -> bool:
    return os.environ.get("PYTHONHASHSEED", "random") != "random"


def _process_parts(parts: dict[str, Any]) -> dict[str, Any]:
    """What of this process the original's outcomes may depend on, beside the freeze."""
    seed = os.environ.get("PYTHONHASHSEED")
    return parts | {"hash_seed": seed, "python": platform.python_version()}


STATE_FIELDS = ("post", "after_reset")  # an observation's states: cached by their parts


def _shared_observations(
    observations: list[Observation], fresh: Pristine | None = None
) -> dict[str, Any]:
    """Observations as the cache holds them (`setup_cache.shared`): a record that is the
    very object of `fresh`'s snapshot written as a reference to it, when its digest is
    known (it is in the entry's key)."""
    records = None if fresh is None or fresh.digest is None else fresh.records
    return shared(observations, STATE_FIELDS, records)


class Pristine(NamedTuple):
    """A target's fresh environment's snapshot, once per target and process: its records
    by (table, key), what cached observations are linked to, and the SHA-256 of the whole
    snapshot as canonical JSON (None: not JSON), the observations entries' key part."""

    records: dict[tuple[str, ...], Any]
    digest: str | None


def _pristine(known: dict[str, Pristine], target: Target) -> Pristine:
    """`target`'s fresh snapshot (`Pristine`), taken once per target in `known`."""
    if target.name not in known:
        snapshot = target.adapter.snapshot(target.adapter.fresh())
        records: dict[tuple[str, ...], Any] = {}
        if isinstance(snapshot, dict):
            for table, rows in snapshot.items():
                if isinstance(rows, dict):
                    for key, record in rows.items():
                        records[(table, key)] = record
        try:
            digest: str | None = content_digest(snapshot)
        except (TypeError, ValueError):  # not JSON (NaN, a set)
            digest = None
        known[target.name] = Pristine(records, digest)
    return known[target.name]


def _linked(known: dict[tuple[str, ...], Any], at: tuple[str, ...], record: Any) -> Any:
    """The fresh record at `at` (in `known`, by `_pristine`) when `record` is canonically
    equal to it, else `record`."""
    found = known.get(at)
    if found is None or found is record or not canonical_equal(found, record):
        return record
    return found


def _relinked(
    observations: list[Observation], known: dict[tuple[str, ...], Any]
) -> list[Observation]:
    """Observations the Dask client sent, each state's record at (table, key) that is
    canonically equal to the fresh environment's (`known`, by `_pristine`) replaced by the
    fresh snapshot's own object, as the cache's are when read (`_observations`). An adapter
    whose snapshots share untouched records (tau2) lets a comparison take a shared record
    as equal by identity (`equality._same`); observations computed in this process share
    them, unpickled copies do not, and each comparison of a mutant's untouched record
    walked it field by field (tau2-retail's pairs 1.64x slower after a cached set-up,
    bench/cached_pairs.py). Only a record `canonical_equal` to the fresh one is relinked,
    so no comparison's answer changes (a record holding NaN is not equal to itself, and
    stays a copy)."""
    same: dict[tuple[str, str, int], Any] = {}  # one record may recur: judged once

    def relink(table: str, key: str, record: Any) -> Any:
        seen = (table, key, id(record))
        if seen not in same:
            same[seen] = _linked(known, (table, key), record)
        return same[seen]

    out = []
    for observation in observations:
        copy = dict(observation)
        for name in STATE_FIELDS:
            state = copy.get(name)
            if isinstance(state, dict):
                copy[name] = {
                    table: {k: relink(table, k, r) for k, r in records.items()}
                    if isinstance(records, dict)
                    else records
                    for table, records in state.items()
                }
        out.append(copy)
    return out


def _observations(value: Any, fresh: Pristine | None = None) -> list[Observation]:
    """Observations read from the cache: with `fresh`, each state's record the entry refers
    to is `fresh`'s own, and each other one canonically equal to the fresh record at its
    (table, key) is replaced by it (`_linked`, once per record read), as `_relinked` does."""
    if fresh is None:
        found = unshared(value, STATE_FIELDS)
    else:
        link = partial(_linked, fresh.records)
        found = unshared(value, STATE_FIELDS, fresh.records, link)
    if not all(isinstance(o, dict) and set(o) == set(OBSERVATION_FIELDS) for o in found):
        raise ValueError("not a list of liveness observations")
    return found


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("not a verdict")
    return value


def _split_entry(value: Any) -> tuple[bool, bytes | None, frozenset[str]]:
    key = value["fingerprint"]
    return (
        _bool(value["grade"]),
        None if key is None else bytes.fromhex(key),
        frozenset(value["functions"]),
    )


def _read_coverage(path: Path | None) -> dict[str, dict[str, Any]]:
    found = (read_verified_json(path) or {}) if path is not None else {}
    return {"tools": found.get("tools", {}), "evaluations": found.get("evaluations", {})}


def _code_names(ctx: RunContext, pairs: list[DrawnPair]) -> dict[str, CodeNames]:
    """Per target, how to name what a run starts: the top-level packages of its pairs' sites."""
    packages: dict[str, set[str]] = {}
    for pair in pairs:
        packages.setdefault(pair.mutant.target, set()).add(pair.mutant.site.file.split("/")[0])
    return {
        name: CodeNames(Path(ctx.targets[name].adapter.source_root()), frozenset(found))
        for name, found in packages.items()
    }


def _split_grade(
    adapter: SplitGrader, task: str, names: CodeNames, known: EvaluationCoverage | None
) -> tuple[bool, bytes | None, frozenset[str]]:
    """(the task's verdict, the fingerprint of its evaluation inputs, the functions its
    evaluation starts: recorded now unless `known`) on the current tools."""
    inputs, window = ClockWindow.around(lambda: adapter.replay(task))
    key = fingerprint(inputs, window)
    if known is not None:
        return bool(adapter.evaluate(task, inputs)), key, frozenset(known.functions)
    with executed_code() as codes:
        verdict = bool(adapter.evaluate(task, inputs))
    return verdict, key, names(codes)


def complete_coverage(
    ctx: RunContext,
    pairs: list[DrawnPair],
    keys: list[tuple[str, str]],
    names: dict[str, CodeNames],
    cached: dict[str, dict[str, Any]],
    path: Path | None,
) -> None:
    """The record of each tool's leading runs (cached in `path` when given, with the
    evaluations' records), and each pair's `Reuse` (`harness.execution.coverage`, cached in
    the set-up cache)."""
    from harness.checker import ReferenceChecker

    sites: dict[tuple[str, str], set[str]] = {}
    for pair in pairs:
        site = pair.mutant.site
        sites.setdefault((pair.mutant.target, pair.tool), set()).add(
            site_function(site.file, site.qualname)
        )
    for name, tool in keys:
        wanted = frozenset(sites[(name, tool)])
        known = cached["tools"].get(f"{name}:{tool}")
        record = None if known is None else ToolCoverage.model_validate(known)
        if record is None or not record.covers(names[name].packages, wanted):
            parts = _baseline_parts(ctx, name, tool)  # the checker's run is in the record
            record = _cached(
                ctx,
                "coverage",
                parts,
                ToolCoverage.model_validate,
                lambda found, packages=names[name].packages, wanted=wanted: found.covers(
                    packages, wanted
                ),
            )
            if record is None:
                record = _record(ctx, name, tool, names[name], wanted)
                _tally(ctx, "computed", "coverage")
                _store(ctx, "coverage", parts, record.model_dump(mode="json"))
            cached["tools"][f"{name}:{tool}"] = record.model_dump(mode="json")
        else:
            _tally(ctx, "from_run_folder", "coverage")
        ctx.coverage[(name, tool)] = record
    for (name, task), started in ctx.evaluations.items():
        packages = sorted(names[name].packages) if name in names else []
        cached["evaluations"][f"{name}:{task}"] = EvaluationCoverage(
            packages=packages, functions=sorted(started or ())
        ).model_dump(mode="json")
    if path is not None:
        _write_json(path, cached)
    # a pair's reuse follows from its tool's record above, the pair and the freeze: cached
    # by content like the rest, one entry per tool holding each pair of it in the run that
    # stored it (a resume asks for fewer)
    checker_reusable = isinstance(ctx.checker, ReferenceChecker)
    by_tool: dict[tuple[str, str], list[DrawnPair]] = {}
    for pair in pairs:
        by_tool.setdefault((pair.mutant.target, pair.tool), []).append(pair)
    originals: OriginalHeads = {}  # a pool mutates each function many times: each read once
    for (name, tool), its in by_tool.items():
        adapter = ctx.targets[name].adapter
        tasks = _grader_tasks(adapter, tool)
        evaluations = {task: ctx.evaluations.get((name, task)) for task in tasks}
        inputs = {
            "record": cached["tools"][f"{name}:{tool}"],
            "tasks": tasks,
            "evaluations": [None if e is None else sorted(e) for e in evaluations.values()],
            "reference_checker": checker_reusable,
        }
        parts = _baseline_parts(ctx, name, tool)
        parts["inputs"] = content_digest(inputs)  # what the reuse follows from, beside the freeze
        table = _cached(ctx, "reuse", parts, _reuse_table, partial(_holds_each, its))
        if table is None:
            given = (Path(adapter.source_root()), originals, tasks, evaluations, checker_reusable)
            table = {pair.pair_id: _reuse(ctx, pair, *given) for pair in its}
            _tally(ctx, "computed", "reuse")
            _store(ctx, "reuse", parts, table, _reuse_entries)
        ctx.reuse.update((p.pair_id, table[p.pair_id]) for p in its if table[p.pair_id] != NOTHING)


def _holds_each(pairs: list[DrawnPair], table: dict[str, Reuse]) -> bool:
    return all(pair.pair_id in table for pair in pairs)


def _reuse(
    ctx: RunContext,
    pair: DrawnPair,
    root: Path,
    originals: OriginalHeads,
    tasks: list[str],
    evaluations: dict[str, frozenset[str] | None],
    checker_reusable: bool,
) -> Reuse:
    """What one pair of a tool whose grader `tasks` are given may take from the original
    (`harness.execution.coverage`)."""
    if pair.contract_patch is not None:  # a negative control: the checker's contract differs
        return NOTHING
    mutant = pair.mutant
    if not definition_unchanged(mutant.site, mutant.mutated_source, root, originals):
        return NOTHING
    coverage = ctx.coverage[(mutant.target, pair.tool)]
    return reuse_for(coverage, mutant.site, tasks, evaluations, checker_reusable)


def _reuse_entries(reuse: dict[str, Reuse]) -> dict[str, list[Any]]:
    return {
        pair_id: [r.observations, r.grades, sorted(r.evaluations), r.checker]
        for pair_id, r in reuse.items()
    }


def _reuse_table(value: Any) -> dict[str, Reuse]:
    if not isinstance(value, dict):
        raise ValueError("not a table of reuse")
    out = {}
    for pair_id, entry in value.items():
        match entry:
            case [int(observations), int(grades), list(evaluations), bool(checker)] if (
                all(isinstance(task, str) for task in evaluations)
                and not isinstance(observations, bool)
                and not isinstance(grades, bool)
            ):
                out[pair_id] = Reuse(observations, grades, frozenset(evaluations), checker)
            case _:
                raise ValueError(f"not a pair's reuse: {pair_id}")
    return out


def _grader_tasks(adapter: Any, tool: str) -> list[str]:
    return adapter.grader_tasks(tool) if isinstance(adapter, GraderAdapter) else []


def _record(
    ctx: RunContext, name: str, tool: str, names: CodeNames, sites: frozenset[str]
) -> ToolCoverage:
    """The leading runs of one tool's pairs repeated on the original under the recorder."""
    target = ctx.targets[name]
    adapter = target.adapter
    calls = ctx.corpus.liveness.get(name, {}).get(tool) or []
    observations = ctx.observations.get((name, tool), [])
    tasks = _grader_tasks(adapter, tool)
    runs: list[tuple[Callable[[], Any], Any]] = [
        (lambda call=call: observe(adapter, tool, [call])[0], observations[index])
        for index, call in enumerate(calls)
    ]
    runs += [(lambda task=task: adapter.grade(task), ctx.grades[(name, task)]) for task in tasks]
    runs.append((lambda: ctx.checker.check(target, [tool]).tool(tool), ctx.baselines[(name, tool)]))
    return record_tool(names, sites, runs, len(calls), tasks)


def score_pair(ctx: RunContext, pair: DrawnPair) -> PairScore:
    """What the pair scores, its mutant applied in this process. Raises only BaseExceptions
    the mutant caused."""
    from harness.mutation.apply import MutantCompileError, StaleMutant, apply_in_memory

    mutant = pair.mutant
    target = ctx.targets[mutant.target]
    try:
        apply_in_memory(target.adapter, mutant)
    except MutantCompileError as exc:
        return PairScore(status=PairStatus.COMPILE_ERROR, error=str(exc))
    except StaleMutant as exc:
        return PairScore(status=PairStatus.INFRA_ERROR, error=f"stale mutant: {exc}")
    if pair.contract_patch is not None:  # a negative control's look-alike input
        contract = target.contracts[pair.tool]
        target.contracts[pair.tool] = patched_contract(contract, pair.contract_patch)
    reuse = ctx.reuse.get(pair.pair_id, NOTHING)
    key = (mutant.target, pair.tool)
    corpus = ctx.corpus.liveness.get(mutant.target, {}).get(pair.tool, [])
    observations = ctx.observations[key][: reuse.observations] + observe(
        target.adapter, pair.tool, corpus[reuse.observations :]
    )
    caught, tasks, reused = grader_verdict(ctx, target, pair.tool, reuse)
    report: ToolReport | Exception
    if reuse.checker:
        report = ctx.baselines[key]
    else:
        try:
            report = ctx.checker.check(target, [pair.tool]).tool(pair.tool)
        except Exception as exc:  # the checker under test failed on this mutant
            report = exc
    score = _decide(ctx, pair, observations, caught, tasks, report)
    return score.model_copy(update={"reused_runs": reuse.runs + reused})


def score_unexecuted(ctx: RunContext, pair: DrawnPair) -> PairScore:
    """What a pair scores when no run of it can reach its mutated function
    (`Reuse.everything`): in this process, without applying it. The mutant is checked and
    defined as `apply_in_memory` does (the same compile and stale statuses) but bound
    nowhere, and the row is decided from the original's outcomes by the same code."""
    from harness.mutation.apply import MutantCompileError, StaleMutant, check_fresh, compile_mutant

    mutant = pair.mutant
    try:
        check_fresh(ctx.targets[mutant.target].adapter, mutant)
        compile_mutant(mutant)
    except MutantCompileError as exc:
        return PairScore(status=PairStatus.COMPILE_ERROR, error=str(exc))
    except StaleMutant as exc:
        return PairScore(status=PairStatus.INFRA_ERROR, error=f"stale mutant: {exc}")
    key = (mutant.target, pair.tool)
    caught = False if isinstance(ctx.targets[mutant.target].adapter, GraderAdapter) else None
    score = _decide(ctx, pair, ctx.observations[key], caught, [], ctx.baselines[key])
    runs = ctx.reuse[pair.pair_id].runs
    return score.model_copy(update={"skipped_by_coverage": True, "reused_runs": runs})


def _decide(
    ctx: RunContext,
    pair: DrawnPair,
    observations: list[Observation],
    caught: bool | None,
    tasks: list[str],
    report: ToolReport | Exception,
) -> PairScore:
    """THE scoring of one pair from what its runs gave: the mutant's liveness observations,
    the grader's answer, and the checker's report (or what the checker raised)."""
    mutant = pair.mutant
    key = (mutant.target, pair.tool)
    calls = compare(ctx.observations[key], observations)  # each observation diffed once
    seen = {
        "live": any(calls),
        "grader_caught": caught,
        "grader_tasks": tasks,
        "kill_vector": kill_vector_of(calls),
    }
    if isinstance(report, Exception):  # the checker under test failed on this mutant
        return PairScore(
            **seen,
            status=PairStatus.MISSED,
            miss_cause=MissCause.CHECKER_CRASH,
            error=f"{type(report).__name__}: {report}",
        )
    seen["graded_clauses"] = sorted(
        c.clause_id for c in report.clauses if c.verdict is not Verdict.UNTESTABLE
    )
    baseline = {c.clause_id for c in ctx.baselines[key].violations()}
    new = [c for c in report.violations() if c.clause_id not in baseline]
    if new:
        classes = {c.defect_class for c in new}
        return PairScore(
            **seen,
            status=PairStatus.DETECTED,
            tool_verdict=report.verdict,
            new_violations=[
                NewViolation(
                    clause_id=c.clause_id,
                    defect_class=c.defect_class,
                    probe=c.witness.probes[-1] if c.witness and c.witness.probes else None,
                )
                for c in new
            ],
            class_matched=None if mutant.defect_class is None else mutant.defect_class in classes,
            witness=new[0].witness,
        )
    if report.verdict is Verdict.UNTESTABLE:
        return PairScore(**seen, status=PairStatus.UNTESTABLE, tool_verdict=report.verdict)
    corpus = ctx.corpus.liveness.get(mutant.target, {}).get(pair.tool, [])
    changes = changes_of(calls, corpus)
    contracts = ctx.targets[mutant.target].contracts
    cause = miss_cause(changes, clause_patterns(contracts[pair.tool]))
    return PairScore(
        **seen,
        status=PairStatus.MISSED,
        tool_verdict=report.verdict,
        miss_cause=cause,
        class_matched=None if mutant.defect_class is None else False,
    )


def grader_verdict(
    ctx: RunContext, target: Target, tool: str, reuse: Reuse = NOTHING
) -> tuple[bool | None, list[str], int]:
    """(grader_caught, grader_tasks, verdicts taken from the original): replay the target's
    own grader on every task that calls `tool` (mutant applied) and name the tasks whose
    utility verdict differs from the original's; (None, [], 0) for a target without a
    grader. `reuse` names the tasks whose verdict is the original's without a replay (the
    untouched prefix) or, on equal evaluation inputs, without an evaluation."""
    adapter = target.adapter
    if not isinstance(adapter, GraderAdapter):
        return None, [], 0
    tasks = adapter.grader_tasks(tool)
    if not tasks:
        return False, [], 0
    changed, reused = [], 0
    for index, task in enumerate(tasks):
        original = ctx.grades[(target.name, task)]
        if index < reuse.grades:
            verdict, reused = original, reused + 1
        elif task in reuse.evaluations and splits(adapter):
            verdict, same = _evaluated(ctx, adapter, target.name, task)
            reused += same
        else:
            try:
                verdict = adapter.grade(task)
            except Exception:  # the mutant broke the replay itself: the grader sees a failure
                verdict = False
        if verdict != original:
            changed.append(task)
    return bool(changed), changed, reused


def _evaluated(ctx: RunContext, adapter: SplitGrader, name: str, task: str) -> tuple[bool, bool]:
    """(the task's verdict, whether it is the original's taken on equal inputs): replayed
    with the mutant, evaluated only when what the evaluation reads differs."""
    try:
        inputs, window = ClockWindow.around(lambda: adapter.replay(task))
    except Exception:  # as grade(): a replay the mutant broke is a failure
        return False, False
    original = ctx.evaluation_keys.get((name, task))
    if original is not None and fingerprint(inputs, window) == original:
        return ctx.grades[(name, task)], True
    try:
        return bool(adapter.evaluate(task, inputs)), False
    except Exception:
        return False, False


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write the run folder's JSON whole (`atomic.write_bytes`) and record its digest, which
    a resume checks before it believes the file (`run_folder.read_verified_json`)."""
    data = (json.dumps(payload, indent=1, sort_keys=True, default=str) + "\n").encode()
    write_bytes(path, data)
    if path.name != "run.json":  # run.json carries the ledger's own digest
        record_digest(path, data)

"""Coverage-guided scoring (`harness.execution.coverage`): recording, the reuse rules,
equal evaluation inputs, and runs scored with it on and off giving the same rows; exhaustive
arms (`draw: all`)."""

from __future__ import annotations

import datetime
import json
import threading
import time
from pathlib import Path

import pytest
from test_runner import comparable, harness

from harness.execution.coverage import (
    NOTHING,
    ClockWindow,
    CodeNames,
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
from harness.execution.ledger import LedgerRow, read_rows
from harness.execution.plan import ArmSpec
from harness.mutation.model import FunctionSite
from harness.mutation.sites import function_source, site_key, tool_sites
from harness.targets.registry import load_target


def toy_site(tool: str, qualname: str) -> FunctionSite:
    adapter = load_target("toy_domain").adapter
    return next(s for s in tool_sites(adapter, tool) if s.qualname == qualname)


def toy_names() -> CodeNames:
    return CodeNames(
        Path(load_target("toy_domain").adapter.source_root()), frozenset({"toy_domain"})
    )


# --- recording ---------------------------------------------------------------------------------


def test_recording_names_the_functions_started_in_every_thread() -> None:
    adapter = load_target("toy_domain").adapter
    names = toy_names()
    with executed_code() as codes:
        env = adapter.fresh()
        worker = threading.Thread(target=adapter.snapshot, args=(env,))
        worker.start()
        worker.join()
    started = names(codes)
    assert "toy_domain/bank.py::Bank.__init__" in started, started
    assert "toy_domain/bank.py::Bank.to_json" in started  # started in the other thread
    assert all(name.startswith("toy_domain/") for name in started)  # other packages left out
    assert CodeNames(names.root, frozenset({"elsewhere"}))(codes) == frozenset()
    with executed_code() as later:  # a second recording sees the same functions again
        adapter.fresh()
    assert "toy_domain/bank.py::Bank.__init__" in names(later)


def test_a_nested_function_counts_as_its_enclosing_site() -> None:
    assert site_function("a.py", "f") == "a.py::f"
    assert site_function("a.py", "f.<locals>.<listcomp>") == "a.py::f"
    assert site_function("a.py", "C.m.<locals>.g.<locals>.<lambda>") == "a.py::C.m"
    assert site_function("a.py", "C.m") == "a.py::C.m"


def test_recording_stops_once_every_site_has_been_started() -> None:
    names = toy_names()
    adapter = load_target("toy_domain").adapter
    env = adapter.fresh()
    bank, to_json = "toy_domain/bank.py::Bank.__init__", "toy_domain/bank.py::Bank.to_json"
    ran: list[str] = []

    def run(label: str, work: object) -> tuple[object, object]:
        def go() -> int:
            ran.append(label)
            work()  # type: ignore[operator]
            return 1

        return go, 1

    runs = [run("fresh", adapter.fresh), run("snapshot", lambda: adapter.snapshot(env))]
    runs.append(run("never", lambda: None))
    record = record_tool(names, frozenset({bank, to_json}), runs, 2, [])  # type: ignore[arg-type]
    assert ran == ["fresh", "snapshot"] and len(record.runs) == 2  # the third is not needed
    assert record.reproducible and record.sites == sorted({bank, to_json})
    assert record.covers(frozenset({"toy_domain"}), frozenset({bank}))
    assert not record.covers(frozenset({"toy_domain"}), frozenset({"toy_domain/x.py::f"}))
    drifting = record_tool(names, frozenset({bank}), [(adapter.fresh, "something else")], 1, [])
    assert not drifting.reproducible


# --- definition time ----------------------------------------------------------------------------


def test_only_body_changes_of_undecorated_functions_may_be_reused() -> None:
    site = toy_site("deposit", "deposit")
    root = Path(load_target("toy_domain").adapter.source_root())
    original = function_source(site, root)
    first, body = original.split("\n", 1)
    changed = original.replace("amount <= 0", "amount < 0")
    assert changed != original and definition_unchanged(site, changed, root)
    assert not definition_unchanged(site, "@staticmethod\n" + original, root)
    head = first.replace("(", "(extra=1, ", 1)
    assert not definition_unchanged(site, head + "\n" + body, root)  # signature / default
    quote = '"""'
    start = original.index(quote) + len(quote)
    docstring = original[:start] + "Changed. " + original[start:]
    assert not definition_unchanged(site, docstring, root)
    assert not definition_unchanged(site, "def deposit(:\n", root)


def test_each_original_is_read_once_when_the_caller_keeps_the_heads(tmp_path: Path) -> None:
    """A pool mutates the same function many times: with `originals`, the original is read
    and parsed once, and every answer is the one a fresh read gives."""
    site = toy_site("deposit", "deposit")
    root = Path(load_target("toy_domain").adapter.source_root())
    copy = tmp_path / site.file
    copy.parent.mkdir(parents=True)
    copy.write_text((root / site.file).read_text(encoding="utf-8"), encoding="utf-8")
    original = function_source(site, tmp_path)
    body_only = original.replace("amount <= 0", "amount < 0")
    renamed = original.replace("def deposit(", "def deposit_(", 1)
    originals: OriginalHeads = {}
    assert definition_unchanged(site, body_only, tmp_path, originals)
    assert not definition_unchanged(site, renamed, tmp_path, originals)
    assert list(originals) == [(str(tmp_path), site_key(site))]
    copy.unlink()  # from here on, a read fails: only the kept head can answer
    assert not definition_unchanged(site, body_only, tmp_path)
    assert definition_unchanged(site, body_only, tmp_path, originals)
    assert not definition_unchanged(site, renamed, tmp_path, originals)
    assert not definition_unchanged(site, "@staticmethod\n" + original, tmp_path, originals)


# --- the reuse rules ----------------------------------------------------------------------------

SITE = FunctionSite(
    module="toy_domain.bank",
    file="toy_domain/bank.py",
    qualname="deposit",
    start_line=1,
    end_line=2,
    source_hash="0" * 64,
)
HIT, MISS = "toy_domain/bank.py::deposit", "toy_domain/bank.py::Bank.__init__"


def coverage(runs: list[list[str]], calls: int, tasks: int) -> ToolCoverage:
    """A record of `calls` liveness calls, `tasks` grader tasks and the checker, of which
    the leading `runs` were recorded."""
    every = sorted({HIT, MISS})
    return ToolCoverage(
        packages=["toy_domain"],
        sites=[HIT],
        reproducible=True,
        liveness_calls=calls,
        grader_tasks=[f"t{i}" for i in range(tasks)],
        functions=every,
        runs=[sorted(every.index(n) for n in run) for run in runs],
    )


def test_runs_are_reused_only_before_the_first_that_starts_the_site() -> None:
    tasks: list[str] = ["t0", "t1"]
    none: dict[str, frozenset[str] | None] = {}
    nothing = reuse_for(coverage([[MISS]] * 5, 2, 2), SITE, tasks, none, True)
    assert nothing == Reuse(2, 2, frozenset(), True) and nothing.everything
    assert nothing.runs == 5
    # the second call starts it: later runs (grader, checker) must run, though they miss it
    second = reuse_for(coverage([[MISS], [HIT]], 2, 2), SITE, tasks, none, True)
    assert (second.observations, second.grades, second.checker) == (1, 0, False)
    grader = reuse_for(coverage([[MISS], [MISS], [MISS], [HIT]], 2, 2), SITE, tasks, none, True)
    assert (grader.observations, grader.grades, grader.checker) == (2, 1, False)
    assert not reuse_for(coverage([[MISS]] * 5, 2, 2), SITE, tasks, none, False).checker
    assert not reuse_for(coverage([[MISS]] * 4 + [[HIT]], 2, 2), SITE, tasks, none, True).checker
    unrecorded = reuse_for(coverage([[MISS]] * 3, 2, 2), SITE, tasks, none, True)
    assert (unrecorded.observations, unrecorded.grades, unrecorded.checker) == (2, 1, False)


def test_no_run_is_reused_when_the_record_cannot_vouch_for_it() -> None:
    record = coverage([[MISS]] * 5, 2, 2)
    tasks = ["t0", "t1"]
    untrusted = record.model_copy(update={"reproducible": False})
    assert reuse_for(untrusted, SITE, tasks, {}, True) == NOTHING
    assert reuse_for(record, SITE, ["t0"], {}, True) == NOTHING  # other grader tasks today
    other = record.model_copy(update={"sites": ["toy_domain/bank.py::transfer"]})
    assert reuse_for(other, SITE, tasks, {}, True) == NOTHING  # not recorded for this site
    elsewhere = SITE.model_copy(update={"file": "other_pkg/bank.py"})
    assert reuse_for(record, elsewhere, tasks, {"t0": frozenset()}, True) == NOTHING


def test_an_evaluation_that_never_starts_the_site_may_be_reused_on_equal_inputs() -> None:
    record = coverage([[HIT]], 1, 3)
    evaluations = {"t0": frozenset({MISS}), "t1": frozenset({HIT}), "t2": None}
    reuse = reuse_for(record, SITE, ["t0", "t1", "t2"], evaluations, True)
    assert reuse.evaluations == frozenset({"t0"})  # t1's evaluation starts it; t2 not split
    assert (reuse.observations, reuse.grades, reuse.checker) == (0, 0, False)


# --- equal evaluation inputs --------------------------------------------------------------------


def test_fingerprints_ignore_wall_clock_stamps_read_during_the_replay_only() -> None:
    fixed = datetime.datetime(2024, 5, 15, 10, 0)

    def replay() -> dict[str, object]:
        return {"sent": datetime.datetime.now(), "event": fixed, "items": [1, 2.0, "x"]}

    first, early = ClockWindow.around(replay)
    time.sleep(0.01)
    second, late = ClockWindow.around(replay)
    assert first["sent"] != second["sent"]
    assert fingerprint(first, early) == fingerprint(second, late)
    moved = {**second, "event": fixed + datetime.timedelta(minutes=1)}
    assert fingerprint(moved, late) != fingerprint(first, early)
    as_int = {**second, "items": [1, 2, "x"]}  # equal in value, differ in type
    assert fingerprint(as_int, late) != fingerprint(first, early)
    stamped = {**second, "event": second["sent"]}  # a clock stamp where the original had none
    assert fingerprint(stamped, late) != fingerprint(first, early)
    assert fingerprint({"f": lambda: 1}, late) is None  # unpicklable: never equal


# --- draw: all ----------------------------------------------------------------------------------


def test_an_exhaustive_arm_takes_no_draw_size_and_a_sampled_arm_needs_one() -> None:
    base = {"name": "a", "kind": "closed_world", "target": "toy_domain", "operators": ["M-*"]}
    assert ArmSpec.model_validate({**base, "draw": "all"}).draw_per_operator is None
    with pytest.raises(ValueError, match="remove draw_per_operator"):
        ArmSpec.model_validate({**base, "draw": "all", "draw_per_operator": 3})
    with pytest.raises(ValueError, match="required with draw: sample"):
        ArmSpec.model_validate(base)


def test_a_refrozen_census_takes_every_candidate_and_a_sampled_arm_only_unused_ones() -> None:
    from harness.execution.draw import draw_sample
    from harness.execution.plan import Plan

    plan = Plan.model_validate(
        {
            "schema_version": 1,
            "name": "p",
            "description": "d",
            "seed": 1,
            "timeout_seconds": 5,
            "arms": [
                {
                    "name": "census",
                    "kind": "closed_world",
                    "target": "toy_domain",
                    "operators": ["M-PHANTOM"],
                    "draw": "all",
                },
                {
                    "name": "sample",
                    "kind": "closed_world",
                    "target": "toy_domain",
                    "operators": ["M-PHANTOM"],
                    "draw_per_operator": 2,
                },
            ],
        }
    )
    from harness.execution.draw import PoolEntry

    pool = [
        PoolEntry(
            pair_id=f"{arm}{i}", mutant_id=f"{arm}{i}", arm=arm, operator="M-PHANTOM", tool=f"t{i}"
        )
        for arm in ("census", "sample")
        for i in range(3)
    ]
    used = {"census0", "census1", "sample0", "sample1"}
    drawn = {e.pair_id for e in draw_sample(plan, pool, used)}
    assert drawn == {"census0", "census1", "census2", "sample2"}


# --- end to end -----------------------------------------------------------------------------------

EXHAUSTIVE = """
schema_version: 1
name: every
description: an exhaustive plan for tests
seed: 7
timeout_seconds: 30
liveness_probes_per_tool: 4
arms:
  - name: toy
    kind: closed_world
    target: toy_domain
    tools: [deposit, issue_voucher]
    operators: [M-PRECOND, M-IGNARG]
    draw: all
  - name: toy-open
    kind: open_world
    target: toy_domain
    tools: [deposit]
    operators: ["CR-core/ReplaceComparisonOperator_Lt_LtE", "CR-core/NumberReplacer"]
    draw: all
  - name: banking
    kind: open_world
    target: agentdojo-banking
    tools: [update_scheduled_transaction]
    operators: ["CR-core/ReplaceComparisonOperator_Eq_NotEq", "MM-*"]
    draw: all
"""


def test_every_kept_candidate_is_scored_and_the_rows_are_the_same_without_coverage(
    tmp_path: Path,
) -> None:
    (tmp_path / "plans").mkdir()
    plan = tmp_path / "plans" / "every.yaml"
    plan.write_text(EXHAUSTIVE)
    assert harness("draw", str(plan), cwd=tmp_path).returncode == 0
    pool = json.loads((tmp_path / "mutants" / "every" / "pool.json").read_text())["entries"]
    kept = {e["pair_id"] for e in pool if e["screen"] == "kept"}
    manifest = json.loads((tmp_path / "mutants" / "every" / "manifest.json").read_text())
    assert {p["pair_id"] for p in manifest["pairs"]} == kept and len(kept) > 10
    assert harness("freeze", str(plan), cwd=tmp_path).returncode == 0
    on = harness("run", str(plan), "--post-hoc", "--workers", "2", cwd=tmp_path)
    assert on.returncode == 0, on.stderr
    (folder,) = (tmp_path / "results" / "every").iterdir()
    with_coverage = list(read_rows(folder / "ledger.jsonl"))
    meta = json.loads((folder / "run.json").read_text())
    assert meta["skip_by_coverage"] is True
    recorded = json.loads((folder / "coverage.json").read_text())
    assert set(recorded["tools"]) == {
        "toy_domain:deposit",
        "toy_domain:issue_voucher",
        "agentdojo-banking:update_scheduled_transaction",
    }
    evaluations = {k: v for k, v in recorded["evaluations"].items() if k.startswith("agentdojo")}
    assert evaluations and all(  # the suite's own utility checks, recorded apart
        any("::UserTask" in f and f.endswith(".utility") for f in e["functions"])
        or any(f.endswith("utility_from_traces") for f in e["functions"])
        for e in evaluations.values()
    ), evaluations
    assert sum(r.reused_runs for r in with_coverage) > 0
    folder.rename(tmp_path / "with-coverage")
    off = harness("run", str(plan), "--post-hoc", "--no-skip-by-coverage", cwd=tmp_path)
    assert off.returncode == 0, off.stderr
    assert json.loads((folder / "run.json").read_text())["skip_by_coverage"] is False
    assert not (folder / "coverage.json").exists()
    without = list(read_rows(folder / "ledger.jsonl"))
    assert not any(r.skipped_by_coverage or r.reused_runs for r in without)
    assert comparable(with_coverage) == comparable(without)
    assert {r.pair_id for r in without} == kept


def test_how_a_row_was_obtained_is_not_part_of_what_it_says() -> None:
    row = LedgerRow.model_validate(
        {
            "pair_id": "m:t",
            "mutant_id": "m",
            "tool": "t",
            "arm": "a",
            "operator": "o",
            "defect_class": None,
            "target": "toy_domain",
            "target_version": "1",
            "freeze_id": "f",
            "status": "missed",
            "skipped_by_coverage": True,
            "reused_runs": 13,
            "timing": {"seconds": 0.001, "started_at": "2026-12-02T00:00:00+00:00"},
        }
    )
    same = row.model_copy(update={"skipped_by_coverage": False, "reused_runs": 0})
    assert row.comparable() == same.comparable()
    old = {**row.model_dump(mode="json"), "schema_version": 2}
    del old["skipped_by_coverage"], old["reused_runs"]
    migrated = LedgerRow.model_validate(old)
    assert (migrated.skipped_by_coverage, migrated.reused_runs) == (False, 0)


def test_a_pair_taken_wholly_from_the_original_scores_as_if_it_had_run(tmp_path: Path) -> None:
    """A mutant that changes nothing a run can see (a no-op statement in `deposit`), scored
    once in a worker and once in the parent from the original's outcomes (`Reuse` of
    everything): the same row, and the parent never forks for it."""
    from test_runner import hand_mutant, project

    from harness.execution import executors
    from harness.execution.draw import DrawnPair, load_corpus, write_corpus
    from harness.execution.pair_scoring import complete_context, new_context
    from harness.execution.plan import load_plan

    root = project(tmp_path)
    assert harness("draw", "plans/small.yaml", cwd=root).returncode == 0
    plan = load_plan(root / "plans" / "small.yaml")
    corpus = load_corpus(root, plan)
    target = load_target("toy_domain")
    site = toy_site("deposit", "deposit")
    original = function_source(site, Path(target.adapter.source_root()))
    docstring_end = original.index('"""', original.index('"""') + 3) + 3
    text = original[:docstring_end] + "\n    _unused = None" + original[docstring_end:]
    mutant = hand_mutant(target.adapter, site, "NOOP", text)
    pair = DrawnPair(
        pair_id=f"{mutant.id}:deposit", arm="closed_world", tool="deposit", mutant=mutant
    )
    corpus = corpus.model_copy(update={"pairs": [pair]})
    write_corpus(root / "mutants" / "small", plan, [], corpus)
    ctx = new_context(plan, "f", False, corpus.liveness, corpus)
    ctx.skip_by_coverage = True
    complete_context(ctx, [pair], None)
    assert definition_unchanged(site, text, Path(target.adapter.source_root()))
    assert ctx.reuse.get(pair.pair_id, NOTHING) == NOTHING  # the first call starts deposit
    outcomes: list = []
    ctx.reuse.clear()
    executors.score_pairs(ctx, [pair], 1, outcomes.append)  # forks a worker
    calls = len(corpus.liveness["toy_domain"]["deposit"])
    ctx.reuse[pair.pair_id] = Reuse(calls, 0, frozenset(), True)

    def no_fork(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pair taken wholly from the original must not fork")

    original_process = executors._FORK.Process
    executors._FORK.Process = no_fork  # type: ignore[method-assign]
    try:
        executors.score_pairs(ctx, [pair], 1, outcomes.append)
    finally:
        executors._FORK.Process = original_process  # type: ignore[method-assign]
    run, parent = (o.score for o in outcomes)
    assert parent.skipped_by_coverage and parent.reused_runs == calls + 1
    assert not run.skipped_by_coverage and run.reused_runs == 0
    assert parent.model_dump(exclude={"skipped_by_coverage", "reused_runs"}) == run.model_dump(
        exclude={"skipped_by_coverage", "reused_runs"}
    )
    assert run.status.value == "missed" and run.live is False


class _Grader:
    """A split grader that counts what it ran; `split_grading` as the class says."""

    def __init__(self, split_grading: bool | None) -> None:
        if split_grading is not None:
            self.split_grading = split_grading
        self.ran: list[str] = []

    def grader_tasks(self, tool: str) -> list[str]:
        return ["t1", "t2"]

    def grade(self, task: str) -> bool:
        self.ran.append(f"grade {task}")
        return True

    def replay(self, task: str) -> tuple:
        self.ran.append(f"replay {task}")
        return (task,)

    def evaluate(self, task: str, inputs: tuple) -> bool:
        self.ran.append(f"evaluate {task}")
        return True


def test_an_adapter_that_opts_out_of_split_grading_is_graded_whole() -> None:
    """`split_grading = False` (bench/split_grading.py says when): a task named for reuse on
    equal inputs is graded whole, never replayed apart; by default a SplitGrader splits, and
    on equal inputs takes the original's verdict without evaluating."""
    from types import SimpleNamespace

    from harness.execution.coverage import ClockWindow, Reuse, fingerprint
    from harness.execution.pair_scoring import grader_verdict
    from harness.targets.adapter import SplitGrader, splits

    reuse = Reuse(0, 0, frozenset({"t1", "t2"}), False)
    for flag, ran in (
        (False, ["grade t1", "grade t2"]),
        (None, ["replay t1", "replay t2"]),
        (True, ["replay t1", "replay t2"]),
    ):
        adapter = _Grader(flag)
        assert isinstance(adapter, SplitGrader) and splits(adapter) is (flag is not False)
        keys = {}
        for task in ("t1", "t2"):
            inputs, window = ClockWindow.around(lambda task=task: (task,))
            keys[("x", task)] = fingerprint(inputs, window)
        ctx = SimpleNamespace(grades={("x", "t1"): True, ("x", "t2"): True}, evaluation_keys=keys)
        target = SimpleNamespace(name="x", adapter=adapter)
        caught, changed, reused = grader_verdict(ctx, target, "tool", reuse)
        assert (caught, changed) == (False, [])
        assert adapter.ran == ran and reused == (0 if flag is False else 2)
    assert not splits(SimpleNamespace(grade=lambda task: True))  # no split at all

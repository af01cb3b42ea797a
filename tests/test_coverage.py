"""Coverage of the original and exact skipping (`harness run --skip-by-coverage`), and
exhaustive arms (`draw: all`)."""

from __future__ import annotations

import json
import shutil
import textwrap
import threading
from pathlib import Path

from test_runner import comparable, harness, ledger

from harness.execution.coverage import (
    Reuse,
    ToolCoverage,
    definition_unchanged,
    executed_code,
    executes,
    function_names,
    record_tool,
    reuse_for,
)
from harness.execution.draw import load_corpus, write_corpus
from harness.execution.plan import load_plan
from harness.mutation.enumerate import unified_diff
from harness.mutation.model import Arm, FunctionSite, Mutant, mutant_id
from harness.mutation.sites import function_source, tool_sites
from harness.targets.registry import load_target

ALL_PLAN = """
schema_version: 1
name: every
description: an exhaustive plan for tests
seed: 7
timeout_seconds: 20
liveness_probes_per_tool: 4
arms:
  - name: closed_world
    kind: closed_world
    target: toy_domain
    tools: [deposit, get_balance]
    operators: [M-PRECOND, M-IGNARG]
    draw: all
"""


def toy_site(tool: str, qualname: str) -> FunctionSite:
    adapter = load_target("toy_domain").adapter
    return next(s for s in tool_sites(adapter, tool) if s.qualname == qualname)


# --- recording ---------------------------------------------------------------------------------


def test_recording_names_the_functions_a_call_executes_in_every_thread() -> None:
    adapter = load_target("toy_domain").adapter
    root = Path(adapter.source_root()).resolve()

    with executed_code() as codes:
        env = adapter.fresh()
        worker = threading.Thread(target=adapter.snapshot, args=(env,))
        worker.start()
        worker.join()
    names = function_names(codes, root, frozenset({"toy_domain"}))
    assert "toy_domain/bank.py::Bank.__init__" in names
    assert all(name.startswith("toy_domain/") for name in names)  # other packages left out
    assert function_names(codes, root, frozenset({"elsewhere"})) == []
    with executed_code() as later:  # a second recording sees the same functions again
        adapter.fresh()
    assert "toy_domain/bank.py::Bank.__init__" in function_names(
        later, root, frozenset({"toy_domain"})
    )


def test_a_nested_function_counts_as_its_enclosing_site() -> None:
    site = toy_site("deposit", "deposit")
    assert executes([f"{site.file}::deposit"], site)
    assert executes([f"{site.file}::deposit.<locals>.<listcomp>"], site)
    assert not executes([f"{site.file}::deposit_all"], site)  # a longer name is not nested
    assert not executes([f"other.py::{site.qualname}"], site)


# --- definition time ----------------------------------------------------------------------------


def test_only_body_changes_of_undecorated_functions_may_be_skipped() -> None:
    site = toy_site("deposit", "deposit")
    root = Path(load_target("toy_domain").adapter.source_root())
    original = function_source(site, root)
    first, body = original.split("\n", 1)
    assert definition_unchanged(site, original.replace("amount <= 0", "amount < 0"), root)
    assert not definition_unchanged(site, "@staticmethod\n" + original, root)
    head = first.replace("(", "(extra=1, ", 1)
    assert not definition_unchanged(site, head + "\n" + body, root)  # signature / default
    text = ast_docstring_changed(original)
    assert text != original and not definition_unchanged(site, text, root)
    assert not definition_unchanged(site, "def deposit(:\n", root)


def ast_docstring_changed(source: str) -> str:
    quote = '"""'
    start = source.index(quote) + len(quote)
    return source[:start] + "Changed. " + source[start:]


# --- the prefix rule ------------------------------------------------------------------------------


def coverage(
    liveness: list[list[str]], grader: list[list[str]], checker: list[str]
) -> ToolCoverage:
    return ToolCoverage(
        packages=["toy_domain"],
        sites=[f"{SITE.file}::{SITE.qualname}"],
        reproducible=True,
        liveness_calls=len(liveness),
        liveness=liveness,
        grader=grader,
        grader_task_ids=[f"t{i}" for i in range(len(grader))],
        checker=checker,
    )


SITE = toy_site("deposit", "deposit")


def test_runs_are_reused_only_before_the_first_that_executes_the_site() -> None:
    site = SITE
    hit, miss = [f"{site.file}::deposit"], ["toy_domain/bank.py::Bank.__init__"]
    tasks = ["t0", "t1"]
    nothing = reuse_for(coverage([miss, miss], [miss, miss], miss), site, tasks, True)
    assert (nothing.observations, nothing.grades, nothing.everything) == (2, 2, True)
    # the second call reaches it: later runs (grader, checker) must run, though they miss it
    second = reuse_for(coverage([miss, hit], [miss, miss], miss), site, tasks, True)
    assert (second.observations, second.grades, second.checker) == (1, 0, False)
    grader = reuse_for(coverage([miss], [miss, hit], miss), site, tasks, True)
    assert (grader.observations, grader.grades, grader.checker) == (1, 1, False)
    assert not reuse_for(coverage([miss], [miss, miss], miss), site, tasks, False).checker
    assert not reuse_for(coverage([miss], [miss, miss], hit), site, tasks, True).checker
    untrusted = coverage([miss], [miss, miss], miss).model_copy(update={"reproducible": False})
    assert reuse_for(untrusted, site, tasks, True).observations == 0
    assert reuse_for(coverage([miss], [miss], miss), site, ["other"], True).observations == 0
    other = coverage([miss], [miss, miss], miss).model_copy(update={"sites": ["x.py::f"]})
    assert reuse_for(other, site, tasks, True).observations == 0  # recorded for other sites
    unrecorded = coverage([miss], [miss, miss], miss).model_copy(update={"liveness_calls": 3})
    assert reuse_for(unrecorded, site, tasks, True) == Reuse(1, 0, False)


def test_recording_stops_once_every_site_has_been_executed() -> None:
    adapter = load_target("toy_domain").adapter
    root = Path(adapter.source_root()).resolve()
    init = FunctionSite(  # not a tool's site: only its name matters here
        module="toy_domain.bank",
        file="toy_domain/bank.py",
        qualname="Bank.__init__",
        start_line=1,
        end_line=1,
        source_hash="",
    )
    calls: list[int] = []

    def observe_call(i: int) -> int:
        calls.append(i)
        adapter.fresh()  # executes Bank.__init__
        return i

    def record(sites: list[FunctionSite], expected_first: int = 0) -> ToolCoverage:
        calls.clear()
        return record_tool(
            root,
            frozenset({"toy_domain"}),
            sites,
            observe_call,
            3,
            lambda task: task == "t0",
            ["t0"],
            lambda: "report",
            ([expected_first, 1, 2], [True], "report"),
        )

    first = record([init])
    assert (calls, len(first.liveness), first.grader, first.checker) == ([0], 1, [], None)
    assert first.reproducible
    assert reuse_for(first, init, ["t0"], True) == Reuse(0, 0, False)
    never = record([SITE])  # deposit is never called: every run is recorded
    assert (calls, len(never.grader), never.checker) == ([0, 1, 2], 1, [])
    assert reuse_for(never, SITE, ["t0"], True) == Reuse(3, 1, True)
    assert not record([SITE], expected_first=9).reproducible  # an outcome differs


# --- end to end ----------------------------------------------------------------------------------

CRASH = """
def _credit(self, account_id: str, amount: int) -> None:
    import os
    os._exit(3)
"""


def exhaustive_project(tmp_path: Path) -> Path:
    """The plan drawn with `draw: all`, plus one crashing mutant of `Bank._credit` paired
    with deposit (which executes it) and with get_balance (which never does), then frozen."""
    root = tmp_path / "every"
    (root / "plans").mkdir(parents=True)
    (root / "plans" / "every.yaml").write_text(ALL_PLAN)
    done = harness("draw", "plans/every.yaml", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    plan = load_plan(root / "plans" / "every.yaml")
    corpus = load_corpus(root, plan)
    target = load_target("toy_domain")
    version = target.adapter.version()
    site = toy_site("deposit", "Bank._credit")
    text = textwrap.dedent(CRASH).lstrip()
    mutant = Mutant(
        id=mutant_id(version, site, "CRASH", 0, text),
        arm=Arm.CLOSED_WORLD,
        operator="CRASH",
        defect_class=None,
        target="toy_domain",
        target_version=version,
        site=site,
        occurrence=0,
        mutated_source=text,
        diff=unified_diff(site, text, target.adapter.source_root()),
    )
    from harness.execution.draw import DrawnPair

    extra = [
        DrawnPair(pair_id=f"{mutant.id}:{tool}", arm="closed_world", tool=tool, mutant=mutant)
        for tool in ("deposit", "get_balance")
    ]
    corpus.pairs.extend(extra)
    pool = json.loads((root / "mutants" / "every" / "pool.json").read_text())
    from harness.execution.draw import PoolEntry

    write_corpus(
        root / "mutants" / "every",
        plan,
        [PoolEntry.model_validate(e) for e in pool["entries"]],
        corpus,
    )
    done = harness("freeze", "plans/every.yaml", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_skipping_gives_the_rows_a_full_run_gives(tmp_path: Path) -> None:
    root = exhaustive_project(tmp_path)
    plan = load_plan(root / "plans" / "every.yaml")
    pool = json.loads((root / "mutants" / "every" / "pool.json").read_text())["entries"]
    kept = [e for e in pool if e["screen"] == "kept"]
    corpus = load_corpus(root, plan)
    assert len(corpus.pairs) == len(kept) + 2  # draw: all took every kept candidate

    full = harness("run", "plans/every.yaml", "--workers", "2", cwd=root)
    assert full.returncode == 0, full.stdout + full.stderr
    off = ledger(root, "every")
    shutil.rmtree(root / "results")
    skipping = harness("run", "plans/every.yaml", "--workers", "2", "--skip-by-coverage", cwd=root)
    assert skipping.returncode == 0, skipping.stdout + skipping.stderr
    on = ledger(root, "every")

    assert comparable(off) == comparable(on)
    assert not any(r.skipped_by_coverage for r in off)
    by_tool = {r.tool: r for r in on if r.operator == "CRASH"}
    assert by_tool["deposit"].status.value == "crash" and not by_tool["deposit"].skipped_by_coverage
    unreached = by_tool["get_balance"]
    assert unreached.skipped_by_coverage
    assert (unreached.status.value, unreached.miss_cause.value, unreached.live) == (
        "missed",
        "unreached",
        False,
    )
    (run,) = (root / "results" / "every").iterdir()
    assert json.loads((run / "run.json").read_text())["skip_by_coverage"] is True
    assert "toy_domain:get_balance" in json.loads((run / "coverage.json").read_text())


def test_draw_all_and_draw_per_operator_exclude_each_other(tmp_path: Path) -> None:
    root = tmp_path / "every"
    (root / "plans").mkdir(parents=True)
    both = ALL_PLAN.replace("draw: all", "draw: all\n    draw_per_operator: 3")
    (root / "plans" / "every.yaml").write_text(both)
    done = harness("draw", "plans/every.yaml", cwd=root)
    assert done.returncode == 2
    assert "draw_per_operator" in done.stderr and "remove draw_per_operator" in done.stderr
    (root / "plans" / "every.yaml").write_text(ALL_PLAN.replace("    draw: all\n", ""))
    done = harness("draw", "plans/every.yaml", cwd=root)
    assert done.returncode == 2 and "required with draw: sample" in done.stderr
    assert not (root / "mutants").exists()

"""`same_as` predictions: every decision of every pair both runs share compared, per scope,
held / failed / undecided; the plan's checks; the same_as table; and from the command line,
the static scanner against itself (held) and the reference checker against it (failed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.analysis.frame import ledger_frame
from harness.analysis.predictions import Outcome, PredictionKind, score_predictions
from harness.analysis.same_as import DECISIONS, SameTable, same_as_outcome, same_tables
from harness.checker.verdicts import Verdict
from harness.errors import UserError
from harness.execution.ledger import LedgerRow, MissCause, NewViolation, PairStatus, Timing
from harness.execution.plan import Plan, Predictions, SameAs, load_plan, prediction_problems

ARM_OPERATOR = {
    "closed_world": "M-PRECOND",
    "open_world": "CR-core/AddNot",
    "controls": "C-REORDER",
    "negative_controls": "NC-same-value",
}


def _row(pair: str, arm: str = "closed_world", target: str = "toy_domain", **fields) -> LedgerRow:
    row = LedgerRow(
        pair_id=pair,
        mutant_id=pair,
        tool="t",
        arm=arm,
        operator=ARM_OPERATOR[arm],
        defect_class=None,
        target=target,
        target_version="1",
        freeze_id="f",
        status=PairStatus.MISSED,
        live=True,
        miss_cause=MissCause.PROBE_UNREVEALING,
        tool_verdict=Verdict.CONFORMS,
        timing=Timing(seconds=0.1, started_at="2026-01-01T00:00:00+00:00"),
    )
    return row.model_copy(update=fields)


def _tables(new: list[LedgerRow], old: list[LedgerRow]) -> dict[str, SameTable]:
    return {t.scope: t for t in same_tables(ledger_frame(new), ledger_frame(old))}


def test_the_decisions_are_columns_of_the_ledger_frame() -> None:
    assert set(DECISIONS) <= set(ledger_frame([]).columns)


def test_timing_and_coverage_reuse_are_never_compared() -> None:
    old = [_row("a"), _row("b", status=PairStatus.DETECTED, miss_cause=None)]
    new = [
        r.model_copy(
            update={
                "timing": Timing(seconds=9.0, started_at="2027-01-01T00:00:00+00:00"),
                "skipped_by_coverage": True,
                "reused_runs": 4,
            }
        )
        for r in old
    ]
    pooled = _tables(new, old)["pooled"]
    assert (pooled.n, pooled.changed) == (2, ())
    assert same_as_outcome(pooled) == "held"


VIOLATION = NewViolation(clause_id="pre.amount_positive", defect_class=None)


@pytest.mark.parametrize(
    ("old", "new", "change"),
    [
        ({"miss_cause": None}, {"status": PairStatus.DETECTED}, "status missed→detected"),
        ({}, {"live": False}, "live true→false"),
        ({}, {"miss_cause": MissCause.NO_CLAUSE}, "miss_cause probe_unrevealing→no_clause"),
        ({"class_matched": False}, {"class_matched": True}, "class_matched false→true"),
        ({"grader_caught": True}, {"grader_caught": False}, "grader_caught true→false"),
        # the grader still catches the mutant, through another task
        (
            {"grader_caught": True, "grader_tasks": ["t1"]},
            {"grader_tasks": ["t2"]},
            "grader_task_ids t1→t2",
        ),
        ({}, {"tool_verdict": Verdict.UNTESTABLE}, "tool_verdict CONFORMS→UNTESTABLE"),
        ({}, {"new_violations": [VIOLATION]}, "new_violations none→pre.amount_positive"),
        # a value appearing from none, and going back to none
        ({"live": None}, {"live": True}, "live none→true"),
        ({}, {"tool_verdict": None}, "tool_verdict CONFORMS→none"),
    ],
)
def test_each_decision_that_differs_is_a_change(old, new, change) -> None:
    # the other pair stays as it was: only the changed one is named
    before = [_row("a", **old), _row("b")]
    after = [_row("a", **{**old, **new}), _row("b")]
    pooled = _tables(after, before)["pooled"]
    assert pooled.n == 2
    assert [(c.pair_id, c.changes) for c in pooled.changed] == [("a", (change,))]
    assert same_as_outcome(pooled) == "failed"


def test_none_against_none_is_no_change() -> None:
    row = _row("a", live=None, miss_cause=None, tool_verdict=None, class_matched=None)
    pooled = _tables([row], [row])["pooled"]
    assert (pooled.n, pooled.changed) == (1, ())


def test_every_arm_kind_is_compared_and_a_pair_names_each_change() -> None:
    old = [_row(f"{arm}-p", arm) for arm in ARM_OPERATOR]
    new = [
        _row("closed_world-p"),
        _row("open_world-p", "open_world", live=False, miss_cause=MissCause.UNREACHED),
        _row("controls-p", "controls", status=PairStatus.DETECTED, miss_cause=None),
        _row("negative_controls-p", "negative_controls", tool_verdict=Verdict.VIOLATES),
    ]
    pooled = _tables(new, old)["pooled"]
    assert pooled.n == 4
    assert [(c.pair_id, c.changes) for c in pooled.changed] == [
        ("controls-p", ("status missed→detected", "miss_cause probe_unrevealing→none")),
        ("negative_controls-p", ("tool_verdict CONFORMS→VIOLATES",)),
        ("open_world-p", ("live true→false", "miss_cause probe_unrevealing→unreached")),
    ]
    # changes apart by `;`: new_violations' clause ids are apart by `,`
    assert str(pooled.changed[0]) == (
        "controls-p (status missed→detected; miss_cause probe_unrevealing→none)"
    )


def test_only_pairs_shared_and_in_n_in_both_runs_count() -> None:
    changed = {"status": PairStatus.DETECTED, "miss_cause": None}
    old = [
        _row("kept"),
        _row("infra-old", status=PairStatus.INFRA_ERROR),
        _row("infra-new"),
        _row("only-old"),
    ]
    new = [
        _row("kept"),
        _row("infra-old", **changed),
        _row("infra-new", status=PairStatus.INFRA_ERROR),
        _row("only-new", **changed),
    ]
    pooled = _tables(new, old)["pooled"]
    assert (pooled.n, pooled.changed) == (1, ())
    assert same_as_outcome(pooled) == "held"


def test_scopes_split_as_the_paired_table_does() -> None:
    old = [
        _row("toy"),
        _row("airline", target="tau2-airline"),
        _row("retail", target="tau2-retail"),
        _row("bank", target="agentdojo-banking"),
    ]
    new = [*old[:2], _row("retail", target="tau2-retail", live=False), old[3]]
    found = same_tables(ledger_frame(new), ledger_frame(old))
    assert [(t.scope, t.n, len(t.changed)) for t in found] == [
        ("toy", 1, 0),
        ("real", 3, 1),
        ("agentdojo", 1, 0),
        ("tau2", 2, 1),
        ("pooled", 4, 1),
    ]


def test_no_shared_pair_is_undecided() -> None:
    (pooled,) = same_tables(ledger_frame([_row("a")]), ledger_frame([_row("b")]))
    assert (pooled.scope, pooled.n) == ("pooled", 0)
    assert same_as_outcome(pooled) == same_as_outcome(None) == "undecided"


def _publish(root: Path, rows: list[LedgerRow]) -> str:
    run = "results/reference/old/abc"
    (root / run).mkdir(parents=True)
    (root / run / "ledger.jsonl").write_text(
        "".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in rows)
    )
    return run


def test_a_same_as_prediction_is_scored_and_names_the_first_three_changes(tmp_path) -> None:
    old = [_row(f"p{i}") for i in range(6)] + [_row("r", target="tau2-airline")]
    new = [_row(f"p{i}", live=bool(i % 2)) for i in range(6)] + [old[-1]]
    run = _publish(tmp_path, old)
    spec = SameAs(run=run, scopes=["real", "toy", "pooled"])
    scored = score_predictions(new, Predictions(same_as=[spec]), tmp_path)
    rows = [p for p in scored if p.kind is PredictionKind.SAME_AS]
    assert [(p.scope, p.n, p.outcome, p.interval) for p in rows] == [
        ("real", 1, Outcome.HELD, None),
        ("toy", 6, Outcome.FAILED, None),
        ("pooled", 7, Outcome.FAILED, None),
    ]
    assert rows[0].observed == "0 of 1 shared pairs changed"
    assert rows[2].predicted == f"= {run}"
    assert rows[2].observed == (
        "3 of 7 shared pairs changed: p0 (live true→false), p2 (live true→false), "
        "p4 (live true→false)"
    )
    three_more = [_row(f"q{i}", status=PairStatus.DETECTED, miss_cause=None) for i in range(3)]
    more = score_predictions([*new, *three_more], Predictions(same_as=[spec]), tmp_path)
    assert [p for p in more if p.kind is PredictionKind.SAME_AS][2].observed.endswith(
        "p4 (live true→false)"
    ), "pairs only the new run holds are not shared"
    old_more = [*old, *(_row(f"q{i}") for i in range(3))]
    (tmp_path / run / "ledger.jsonl").write_text(
        "".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in old_more)
    )
    more = score_predictions([*new, *three_more], Predictions(same_as=[spec]), tmp_path)
    pooled = [p for p in more if p.kind is PredictionKind.SAME_AS][2]
    assert pooled.observed == (
        "6 of 10 shared pairs changed: p0 (live true→false), p2 (live true→false), "
        "p4 (live true→false) and 3 more"
    )


def test_a_run_not_found_is_undecided_and_said_in_the_table(tmp_path) -> None:
    from harness.analysis.render import render_csv, render_markdown
    from harness.analysis.runs import RunMeta
    from harness.analysis.tables.same_as import same_as_table

    spec = SameAs(run="results/reference/old/gone")
    scored = score_predictions([_row("a")], Predictions(same_as=[spec]), tmp_path)
    (row,) = [p for p in scored if p.kind is PredictionKind.SAME_AS]
    assert (row.scope, row.observed, row.n, row.outcome) == (
        "pooled",
        "run not found",
        0,
        Outcome.UNDECIDED,
    )
    table = same_as_table(scored, RunMeta(plan="p", run="r", freeze_id="f"))
    assert [r.cells for r in table.rows] == [
        ("results/reference/old/gone", "pooled", None, None, "run not found", None, "undecided")
    ]
    assert "run not found" in render_markdown(table) and "run not found" in render_csv(table)


def test_the_same_as_table_lists_every_scope_then_the_pooled_changed_pairs(tmp_path) -> None:
    from harness.analysis.render import render_markdown
    from harness.analysis.runs import RunMeta
    from harness.analysis.tables import build_tables

    old = [_row("a"), _row("b"), _row("r", target="tau2-airline")]
    new = [_row("a", status=PairStatus.DETECTED, miss_cause=None), _row("b"), old[2]]
    run = _publish(tmp_path, old)
    meta = RunMeta(
        plan="p",
        run="r",
        freeze_id="f",
        predictions=Predictions(same_as=[SameAs(run=run, scopes=["real"])]),
        project_root=str(tmp_path),
    )
    tables = {t.name: t for t in build_tables(new, meta)}
    table = tables["same_as"]
    assert [r.cells for r in table.rows] == [
        (run, "toy", 2, 1, None, None, "not predicted"),
        (run, "real", 1, 0, None, None, "held"),
        (run, "tau2", 1, 0, None, None, "not predicted"),
        (run, "pooled", 3, 1, None, None, "not predicted"),
        (
            run,
            "pooled",
            None,
            None,
            "a",
            "status missed→detected; miss_cause probe_unrevealing→none",
            None,
        ),
    ]
    assert [r.section for r in table.rows] == [0, 0, 0, 0, 1]
    assert "decisions changed (old→new)" in render_markdown(table)
    notes = " ".join(tables["predictions"].notes)
    assert "same_as: on the pairs of every arm both runs share" in notes


# --- the plan ---------------------------------------------------------------------------------


def _plan(arms: list[dict], same_as: list[dict]) -> Plan:
    return Plan.model_validate(
        {
            "name": "p",
            "description": "d",
            "seed": 1,
            "arms": arms,
            "predictions": {"same_as": same_as},
        }
    )


TOY_ARM = {
    "name": "closed",
    "kind": "closed_world",
    "target": "toy_domain",
    "operators": ["M-PRECOND"],
    "draw_per_operator": 1,
}


def test_a_same_as_scope_must_be_one_an_arm_draws_from() -> None:
    assert SameAs(run="r").scopes == ["pooled"]
    plan = _plan([TOY_ARM], [{"run": "r", "scopes": ["toy", "real", "pooled"]}])
    (problem,) = prediction_problems(plan, "plans/p.yaml")
    assert problem.line() == (
        "plans/p.yaml: predictions.same_as.0.scopes: 'real' is no scope an arm of the plan "
        "draws from; fix: name one of toy, pooled"
    )


def test_a_controls_arm_over_two_targets_draws_from_each() -> None:
    controls = {
        "name": "controls",
        "kind": "controls",
        "target": ["toy_domain", "tau2-airline"],
        "operators": ["C-REORDER"],
        "draw_per_operator": 1,
    }
    fine = _plan([TOY_ARM, controls], [{"run": "r", "scopes": ["toy", "real", "tau2"]}])
    assert prediction_problems(fine, "plans/p.yaml") == []
    wrong = _plan([TOY_ARM, controls], [{"run": "r", "scopes": ["bfcl"]}])
    (problem,) = prediction_problems(wrong, "plans/p.yaml")
    assert problem.fix == "name one of toy, real, tau2, pooled"


def test_a_same_as_run_that_is_not_there_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    plan = tmp_path / "plans" / "p.yaml"
    plan.write_text(
        "schema_version: 1\nname: p\ndescription: d\nseed: 1\narms:\n"
        "  - {name: a, kind: closed_world, target: toy_domain, operators: [M-PRECOND], "
        "draw_per_operator: 1}\n"
        "predictions:\n  same_as:\n    - run: results/reference/old/abc\n"
    )
    with pytest.raises(UserError) as refused:
        load_plan(plan)
    assert str(refused.value).endswith(
        "predictions.same_as[0].run: results/reference/old/abc holds no ledger.jsonl; fix: "
        "name a published run folder, relative to the project root (results/reference/PLAN/RUN)"
    )
    _publish(tmp_path, [])
    assert load_plan(plan).predictions.same_as[0].scopes == ["pooled"]


# --- from the command line ----------------------------------------------------------------------

SCAN_PLAN = """\
schema_version: 1
name: {name}
description: a small toy draw, checked by {checker}
seed: 7
checker: {checker}
liveness_probes_per_tool: 2
arms:
  - name: closed_world
    kind: closed_world
    target: toy_domain
    tools: [deposit, transfer, reserve_item]
    operators: [M-PHANTOM, M-PRECOND]
    draw_per_operator: 3
"""


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True
    )


def _draw_and_freeze(root: Path, name: str, checker: str, same_as: str | None = None) -> None:
    text = SCAN_PLAN.format(name=name, checker=checker)
    if same_as is not None:
        text += f"predictions:\n  same_as:\n    - run: {same_as}\n"
    (root / "plans" / f"{name}.yaml").write_text(text)
    for command in ("draw", "freeze"):
        done = harness(command, f"plans/{name}.yaml", cwd=root)
        assert done.returncode == 0, done.stdout + done.stderr


def _commit(root: Path) -> None:
    # --strict refuses a freeze record that git does not hold
    for args in (
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "freeze"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_the_same_checker_holds_and_the_reference_checker_fails_from_the_command_line(
    tmp_path: Path,
) -> None:
    from harness.analysis.runs import load_run
    from harness.analysis.tables import build_tables

    root = tmp_path / "project"
    (root / "plans").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _draw_and_freeze(root, "scan", "static-scanner")
    _commit(root)
    first = harness("run", "plans/scan.yaml", cwd=root)
    assert first.returncode == 0, first.stdout + first.stderr
    (published,) = (root / "results" / "scan").iterdir()
    run = f"results/scan/{published.name}"

    _draw_and_freeze(root, "scan-again", "static-scanner", same_as=run)
    _draw_and_freeze(root, "reference", "reference", same_as=run)
    _commit(root)
    same = harness("run", "plans/scan-again.yaml", "--strict", cwd=root)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "verdict: 1 predictions scored: 1 held, 0 failed, 0 undecided" in same.stdout

    other = harness("run", "plans/reference.yaml", "--strict", cwd=root)
    assert other.returncode == 3, other.stdout + other.stderr
    (failed,) = [line for line in other.stdout.splitlines() if line.startswith("failed: ")]
    assert failed.startswith(f"failed: same_as pooled {run}: 6 of 6 shared pairs changed: ")
    assert failed.count("status missed→detected") == 3 and "and 3 more" in failed

    (scored,) = (root / "results" / "reference").iterdir()
    meta, rows = load_run(scored)
    table = {t.name: t for t in build_tables(rows, meta)}["same_as"]
    changed = [r.cells for r in table.rows if r.section == 1]
    assert len(changed) == 6
    assert all("status missed→detected" in str(cells[5]) for cells in changed)

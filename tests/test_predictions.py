"""Predictions scored (the outcome rule, each kind of prediction), flag precision, the plan
schema's prediction fields, and `--strict` from the command line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.analysis.frame import ledger_frame
from harness.analysis.predictions import (
    Outcome,
    PredictionKind,
    ceiling_outcome,
    floor_outcome,
    score_predictions,
    verdict_outcome,
)
from harness.analysis.runs import RunMeta, load_run, with_frozen_predictions
from harness.analysis.scoring import Scope, correct_flag, flag_precision
from harness.analysis.statistics import wilson_interval
from harness.checker.verdicts import Verdict
from harness.defects import DefectClass
from harness.execution.ledger import LedgerRow, PairStatus, Timing
from harness.execution.plan import Predictions

FIXTURE = Path(__file__).parent / "fixtures" / "example_run"

# --- the outcome rule -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("interval", "outcome"),
    [
        ((0.80, 0.95), Outcome.HELD),  # lower end on the floor: wholly on the predicted side
        ((0.81, 1.00), Outcome.HELD),
        ((0.79, 0.95), Outcome.UNDECIDED),  # straddles
        ((0.50, 0.80), Outcome.UNDECIDED),  # upper end touches the floor: not wholly below
        ((0.50, 0.799), Outcome.FAILED),
        ((0.0, 1.0), Outcome.UNDECIDED),  # no pairs
    ],
)
def test_a_floor_holds_fails_or_stays_undecided_by_where_the_interval_lies(interval, outcome):
    assert floor_outcome(0.8, interval) is outcome


@pytest.mark.parametrize(
    ("interval", "outcome"),
    [
        ((0.05, 0.20), Outcome.HELD),
        ((0.0, 0.19), Outcome.HELD),
        ((0.10, 0.21), Outcome.UNDECIDED),
        ((0.20, 0.40), Outcome.UNDECIDED),  # lower end on the ceiling: not wholly above
        ((0.201, 0.40), Outcome.FAILED),
    ],
)
def test_a_ceiling_is_the_mirror_of_a_floor(interval, outcome):
    assert ceiling_outcome(0.2, interval) is outcome


@pytest.mark.parametrize(
    ("predicted", "observed", "outcome"),
    [
        (Verdict.CONFORMS, Verdict.CONFORMS, Outcome.HELD),
        (Verdict.CONFORMS, Verdict.VIOLATES, Outcome.FAILED),
        (Verdict.VIOLATES, Verdict.CONFORMS, Outcome.FAILED),
        (Verdict.CONFORMS, Verdict.UNTESTABLE, Outcome.UNDECIDED),
        (Verdict.UNTESTABLE, Verdict.UNTESTABLE, Outcome.HELD),
        (Verdict.UNTESTABLE, Verdict.CONFORMS, Outcome.FAILED),
        (Verdict.CONFORMS, None, Outcome.UNDECIDED),  # crash, timeout: no verdict
    ],
)
def test_a_negative_control_verdict(predicted, observed, outcome):
    assert verdict_outcome(predicted, observed) is outcome


# --- scoring a run ----------------------------------------------------------------------------


def test_the_example_run_scores_every_kind_of_prediction():
    meta, rows = load_run(FIXTURE)
    scored = score_predictions(rows, meta.predictions)
    by_key = {(p.kind, p.scope, p.subject): p for p in scored}
    reset = by_key[(PredictionKind.RECALL_FLOOR, "toy", "M-RESET")]
    # 1 of 5 detected: the whole interval lies below the 0.9 floor
    assert (reset.observed, reset.n, reset.outcome) == ("0.200", 5, Outcome.FAILED)
    assert reset.interval is not None and reset.interval[1] < 0.9
    phantom = by_key[(PredictionKind.RECALL_FLOOR, "pooled", "M-PHANTOM")]
    assert phantom.outcome is Outcome.UNDECIDED and phantom.interval[0] < 0.5 < phantom.interval[1]
    assert by_key[(PredictionKind.RECALL_FLOOR, "real", "M-IGNARG")].outcome is Outcome.HELD
    # M-IGNARG has only real pairs: no toy row, as in the recall table
    assert (PredictionKind.RECALL_FLOOR, "toy", "M-IGNARG") not in by_key
    assert {p.scope for p in scored if p.kind is PredictionKind.PRECISION_FLOOR} == {
        "real",
        "toy",
        "pooled",
    }
    escape = by_key[(PredictionKind.ESCAPE_RATE_CEILING, "pooled", "all")]
    assert (escape.observed, escape.outcome) == ("0.625", Outcome.HELD)
    controls = [p for p in scored if p.kind is PredictionKind.NEGATIVE_CONTROL]
    assert {p.subject: p.outcome for p in controls} == {
        "NC-int-float / deposit": Outcome.FAILED,
        "NC-same-value / rename_meeting": Outcome.HELD,
        "NC-two-encodings / update_item": Outcome.UNDECIDED,
    }


def test_a_prediction_on_an_operator_with_no_pairs_is_undecided():
    _, rows = load_run(FIXTURE)
    scored = score_predictions(rows, Predictions(recall_floor={"M-INVAR": 0.5}))
    (invar,) = [p for p in scored if p.kind is PredictionKind.RECALL_FLOOR]
    assert (invar.n, invar.observed, invar.outcome) == (0, None, Outcome.UNDECIDED)


def test_without_plan_predictions_only_negative_controls_are_scored():
    _, rows = load_run(FIXTURE)
    kinds = {p.kind for p in score_predictions(rows, None)}
    assert kinds == {PredictionKind.NEGATIVE_CONTROL}


def _flag(arm: str, operator: str, tool: str, predicted: Verdict | None = None) -> LedgerRow:
    return LedgerRow(
        pair_id=f"{arm}:{operator}:{tool}",
        mutant_id=f"{operator}-{tool}",
        tool=tool,
        arm=arm,
        operator=operator,
        defect_class=None,
        target="toy_domain",
        target_version="1",
        freeze_id="f",
        status=PairStatus.DETECTED,
        predicted=predicted,
        timing=Timing(seconds=0.1, started_at="2026-01-01T00:00:00+00:00"),
    )


def _pair(target: str, tool: str, status: PairStatus, n: int) -> LedgerRow:
    row = _flag("closed_world", "M-PHANTOM", tool).model_copy(
        update={"target": target, "status": status, "pair_id": f"{target}:{tool}:{n}"}
    )
    return row.model_copy(update={"defect_class": DefectClass.PHANTOM_EFFECT})


def test_a_benchmark_floor_is_scored_on_that_benchmarks_pairs_alone_and_comes_first():
    # bfcl: 9 of 10 detected on 2 tools; tau2: 0 of 10 (it must not pull bfcl's recall down)
    rows = [
        _pair("bfcl-message", "send", PairStatus.DETECTED if i else PairStatus.MISSED, i)
        for i in range(5)
    ]
    rows += [_pair("bfcl-posting", "post", PairStatus.DETECTED, i) for i in range(5)]
    rows += [_pair("tau2-retail", "cancel", PairStatus.MISSED, i) for i in range(10)]
    predictions = Predictions(
        recall_floor={"all": 0.1},
        benchmark_recall_floor={"bfcl": {"all": 0.5, "M-PHANTOM": 0.95}, "tau2": {"all": 0.5}},
    )
    scored = score_predictions(rows, predictions)
    head = [(p.scope, p.subject, p.observed, p.n, p.outcome) for p in scored[:3]]
    # Wilson 95% for 9 of 10: [0.596, 0.982]; the design effect over the two tools is 1
    # here (the intraclass correlation estimate is negative, clipped at 0)
    assert head == [
        ("bfcl", "all", "0.900", 10, Outcome.HELD),
        ("bfcl", "M-PHANTOM", "0.900", 10, Outcome.UNDECIDED),
        ("tau2", "all", "0.000", 10, Outcome.FAILED),
    ]
    lo, hi = scored[0].interval
    assert (round(lo, 3), round(hi, 3)) == (0.596, 0.982)
    assert scored[3].kind is PredictionKind.RECALL_FLOOR and scored[3].scope == "real"


def test_flag_precision_of_25_correct_flags_has_the_published_lower_bound():
    flags = [_flag("closed_world", "M-PHANTOM", f"tool{i % 5}") for i in range(25)]
    (pooled,) = [r for r in flag_precision(ledger_frame(flags)) if r.scope is Scope.POOLED]
    assert (pooled.flags, pooled.precision.x, pooled.false_flags) == (25, 25, 0)
    assert round(pooled.precision.plain[0], 3) == 0.867  # DESIGN.md: 25 of 25 → 0.867
    assert round(pooled.precision.clustered.lo, 3) == 0.867  # no spread across tools


def _correct(row: LedgerRow) -> bool:
    (correct,) = correct_flag(ledger_frame([row])).tolist()
    return correct


def test_false_flags_are_those_on_controls_and_on_conforming_negative_controls():
    assert _correct(_flag("closed_world", "M-PHANTOM", "t"))
    assert _correct(_flag("open_world", "CR-core/X", "t"))
    assert not _correct(_flag("controls", "C-REORDER", "t"))
    assert not _correct(_flag("negative_controls", "NC-a", "t", Verdict.CONFORMS))
    assert _correct(_flag("negative_controls", "NC-b", "t", Verdict.VIOLATES))
    rows = [
        _flag("closed_world", "M-PHANTOM", "a"),
        _flag("closed_world", "M-PHANTOM", "b"),
        _flag("controls", "C-REORDER", "a"),
        _flag("negative_controls", "NC-a", "b", Verdict.CONFORMS),
    ]
    (pooled,) = flag_precision(ledger_frame(rows))[-1:]
    assert (pooled.flags, pooled.on_mutants, pooled.on_controls, pooled.on_negative_controls) == (
        4,
        2,
        1,
        1,
    )
    assert pooled.precision.value == 0.5 and pooled.precision.plain == wilson_interval(2, 4)


# --- where a report finds the predictions -----------------------------------------------------


def _published_layout(tmp_path: Path, plan_text: str, freeze_id: str) -> Path:
    """`<root>/results/reference/<plan>/<run>` holding the example run without predictions,
    and `<root>/plans/` holding a plan and a freeze record of `freeze_id`."""
    import hashlib

    root = tmp_path / "project"
    run = root / "results" / "reference" / "example" / "r1"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("expected_tables"))
    manifest = json.loads((run / "run.json").read_text())
    del manifest["predictions"]
    (run / "run.json").write_text(json.dumps(manifest))
    (root / "plans").mkdir()
    plan = root / "plans" / "example.yaml"
    plan.write_text(plan_text)
    digest = hashlib.sha256(plan.read_bytes()).hexdigest()
    record = {"freeze_id": freeze_id, "hashes": {"plan": {"plans/example.yaml": digest}}}
    (root / "plans" / "example.freeze.json").write_text(json.dumps(record))
    return run


EXAMPLE_PLAN = """\
schema_version: 1
name: example
description: the example run's plan
seed: 1
arms:
  - {name: closed_world, kind: closed_world, target: toy_domain, operators: [M-RESET],
     draw_per_operator: 5}
predictions:
  recall_floor: {M-RESET: 0.9}
"""


def test_a_run_without_recorded_predictions_uses_the_plan_its_freeze_hashed(tmp_path):
    run = _published_layout(tmp_path, EXAMPLE_PLAN, "0f1e2d3c4b5a6978")
    meta = RunMeta.model_validate_json((run / "run.json").read_text())
    assert meta.predictions is None
    found, why = with_frozen_predictions(run, meta)
    assert not why and found.predictions == Predictions(recall_floor={"M-RESET": 0.9})
    assert "the file freeze 0f1e2d3c4b5a6978 hashed" in found.predictions_source


def test_a_plan_of_another_freeze_is_not_used(tmp_path):
    run = _published_layout(tmp_path, EXAMPLE_PLAN, "1111111111111111")
    meta = RunMeta.model_validate_json((run / "run.json").read_text())
    found, why = with_frozen_predictions(run, meta)
    assert found.predictions is None and "not the run's 0f1e2d3c4b5a6978" in why
    (run.parents[3] / "plans" / "example.freeze.json").write_text(
        json.dumps(
            {"freeze_id": "0f1e2d3c4b5a6978", "hashes": {"plan": {"plans/example.yaml": "0"}}}
        )
    )
    found, why = with_frozen_predictions(run, meta)
    assert found.predictions is None and "differs from the plan freeze" in why


# --- the plan schema --------------------------------------------------------------------------


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True
    )


def test_plan_schema_shows_the_prediction_fields(tmp_path):
    schema = json.loads(harness("plan", "schema", cwd=tmp_path).stdout)
    fields = schema["$defs"]["Predictions"]["properties"]
    assert {"recall_floor", "precision_floor", "escape_rate_ceiling"} <= set(fields)
    floor = fields["recall_floor"]["additionalProperties"]
    assert (floor["minimum"], floor["maximum"]) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("predictions", "message"),
    [
        (
            "recall_floor: {M-RESET: 1.5}",
            "predictions.recall_floor.M-RESET: Input should be less than or equal to 1; "
            "fix: use a smaller number",
        ),
        ("recall_floor: {M-RESET: high}", "predictions.recall_floor.M-RESET: Input should be"),
        (
            "precision_floor: -0.1",
            "predictions.precision_floor: Input should be greater than or equal to 0",
        ),
        (
            "recall_floor: {M-NOPE: 0.5}",
            "predictions.recall_floor.M-NOPE: no closed-world arm draws operator 'M-NOPE'; "
            "fix: name one of M-RESET, all",
        ),
        (
            "escape_rate_ceiling: {all: 0.2}",
            "predictions.escape_rate_ceiling.all: no open-world arm draws operator 'all'; "
            "fix: add an open_world arm or remove the ceiling",
        ),
        ("recall_ceiling: {M-RESET: 0.5}", "predictions.recall_ceiling"),
        (
            "benchmark_recall_floor: {bfcl: {all: 0.5}}",
            "predictions.benchmark_recall_floor.bfcl: no closed-world arm draws from a target "
            "of benchmark 'bfcl'",
        ),
        (
            "benchmark_recall_floor: {toy_domain: {M-NOPE: 0.5}}",
            "predictions.benchmark_recall_floor.toy_domain.M-NOPE: no closed-world arm of "
            "benchmark 'toy_domain' draws operator 'M-NOPE'; fix: name one of M-RESET, all",
        ),
    ],
)
def test_bad_predictions_are_one_line_errors(tmp_path, predictions, message):
    root = tmp_path / "p"
    (root / "plans").mkdir(parents=True)
    text = EXAMPLE_PLAN.replace("recall_floor: {M-RESET: 0.9}", predictions)
    (root / "plans" / "example.yaml").write_text(text)
    done = harness("draw", "plans/example.yaml", cwd=root)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (root / "mutants").exists()


def test_a_closed_world_arm_over_two_targets_has_its_predictions_checked():
    """Its targets are a list: the benchmark and better_than scope checks read each one
    (they once hashed the list itself and raised TypeError)."""
    from harness.execution.plan import Plan, prediction_problems

    arm = {
        "name": "a",
        "kind": "closed_world",
        "target": ["toy_domain", "tau2-airline"],
        "operators": ["M-RESET"],
        "draw_per_operator": 1,
    }
    plan = Plan.model_validate(
        {
            "name": "p",
            "description": "d",
            "seed": 1,
            "arms": [arm],
            "predictions": {
                "benchmark_recall_floor": {"tau2": {"M-RESET": 0.5}},
                "better_than": [{"run": "r", "scopes": ["tau2", "bfcl"]}],
            },
        }
    )
    problems = prediction_problems(plan, "plans/p.yaml")
    assert [(p.where, p.message) for p in problems] == [
        (
            "predictions.better_than.0.scopes",
            "'bfcl' is no scope of the plan's closed-world pairs",
        )
    ]


# --- --strict from the command line -----------------------------------------------------------


def test_report_strict_exits_3_on_a_failed_prediction_and_0_without(tmp_path):
    lenient = harness("report", str(FIXTURE), "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert lenient.returncode == 0, lenient.stderr
    assert "verdict: 14 predictions scored: 7 held, 3 failed, 4 undecided" in lenient.stdout
    failed = "failed: recall_floor toy M-RESET: 0.200 [0.036, 0.624], predicted ≥ 0.900;"
    assert failed in lenient.stdout
    assert f"report: {tmp_path / 'a' / 'report.html'}" in lenient.stdout
    strict = harness("report", str(FIXTURE), "--out", str(tmp_path / "b"), "--strict", cwd=tmp_path)
    assert strict.returncode == 3, strict.stdout + strict.stderr
    assert "recall_floor toy M-RESET" in strict.stdout
    # the tables are written either way: a failed prediction is a result
    assert (tmp_path / "b" / "tables" / "predictions.md").is_file()


STRICT_PLAN = """\
schema_version: 1
name: strict
description: the static scanner as the plan's checker, with floors it cannot meet
seed: 7
checker: static-scanner
liveness_probes_per_tool: 2
arms:
  - name: closed_world
    kind: closed_world
    target: toy_domain
    tools: [deposit, transfer, reserve_item]
    operators: [M-PHANTOM, M-PRECOND]
    draw_per_operator: 3
predictions:
  recall_floor: {{all: {floor}}}
"""


@pytest.mark.parametrize(("floor", "strict_exit"), [(0.95, 3), (0.0, 0)])
def test_run_strict_exits_3_only_when_a_prediction_failed(tmp_path, floor, strict_exit):
    root = tmp_path / "strict"
    (root / "plans").mkdir(parents=True)
    (root / "plans" / "strict.yaml").write_text(STRICT_PLAN.format(floor=floor))
    for command in ("draw", "freeze"):
        done = harness(command, "plans/strict.yaml", cwd=root)
        assert done.returncode == 0, done.stdout + done.stderr
    # --strict also refuses a freeze record that git does not hold: commit it first
    for git_args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "freeze"],
    ):
        subprocess.run(["git", *git_args], cwd=root, check=True, capture_output=True)
    strict = harness("run", "plans/strict.yaml", "--strict", cwd=root)
    assert strict.returncode == strict_exit, strict.stdout + strict.stderr
    assert "Predictions of the plan, scored" in strict.stdout
    lenient = harness("run", "plans/strict.yaml", cwd=root)  # finishes at once: all scored
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    (run,) = (root / "results" / "strict").iterdir()
    recorded = json.loads((run / "run.json").read_text())["predictions"]
    assert recorded["recall_floor"] == {"all": floor}


def test_a_comparison_checkers_run_scores_no_prediction(tmp_path):
    """The plan's predictions are its own checker's: a `<freeze>.<checker>` run has none."""
    from harness.analysis.report import report
    from harness.analysis.tables import build_tables

    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("expected_tables"))
    manifest = json.loads((run / "run.json").read_text())
    manifest["run"] = f"{manifest['freeze_id']}.static-scanner"
    (run / "run.json").write_text(json.dumps(manifest))
    meta, rows = load_run(run)
    assert meta.comparison_run
    assert "predictions" not in [t.name for t in build_tables(rows, meta)]
    result = report(run, tmp_path / "out")
    assert result.predictions == ()
    assert any("they are the plan checker's" in note for note in result.notes)

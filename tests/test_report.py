"""`report` and `compare` on the committed example run and on runs built here."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image
import pytest
from rich.console import Console

from harness.analysis import compare, main_tables, report
from harness.analysis.compare import comparison_table
from harness.analysis.frame import ledger_frame
from harness.analysis.macros import MACRO_NAME, macro_word, unique_names
from harness.analysis.mutation_report import status_of
from harness.analysis.plots import DPI, MARGIN_INCHES, ROW_INCHES, WIDTH_INCHES
from harness.analysis.render import render_csv, render_latex, render_markdown
from harness.analysis.report import NO_GRADER_NOTE
from harness.analysis.runs import load_run
from harness.analysis.scoring import (
    ALL,
    Scope,
    closed_world_recall,
    grader_arm,
    grader_tasks_by_tool,
    task_order,
)
from harness.analysis.statistics import clustered_wilson, wilson_interval
from harness.analysis.tables import Table, build_tables, task_list_text
from harness.checker.verdicts import DefectClass
from harness.execution.draw import Corpus, DrawnPair
from harness.execution.ledger import LedgerRow, MissCause, PairStatus, Timing
from harness.mutation.model import Arm, FunctionSite, Mutant

FIXTURE = Path(__file__).parent / "fixtures" / "example_run"
GOLDEN = FIXTURE / "expected_tables"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NEWCOMMAND = re.compile(r"^\\newcommand\{\\([^}]*)\}\{([^}]*)\}$")


def squeeze(text: str) -> str:
    """Markdown with tabulate's column padding collapsed: rows read `| a | b |`."""
    return re.sub(r" {2,}", " ", text)


def markdown(table: Table) -> str:
    return squeeze(render_markdown(table))


@pytest.fixture(scope="module")
def example_report(tmp_path_factory: pytest.TempPathFactory):
    return report(FIXTURE, tmp_path_factory.mktemp("report"))


def _copy_run(destination: Path, edit=None, post_hoc_run: bool = False) -> Path:
    """The example run copied to `destination`, each row passed through `edit`."""
    destination.mkdir(parents=True, exist_ok=True)
    _, rows = load_run(FIXTURE)
    if edit is not None:
        rows = [edit(row) for row in rows]
    _write_run(destination, rows, post_hoc=post_hoc_run)
    return destination


def _write_run(folder: Path, rows: list[LedgerRow], post_hoc: bool = False, run: str = "r1"):
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r.model_dump(mode="json"), sort_keys=True) + "\n" for r in rows)
    (folder / "ledger.jsonl").write_text(text)
    meta = json.loads((FIXTURE / "run.json").read_text())
    # a whole run of exactly these rows (a run.json counting more would make it SHORT)
    meta.update(post_hoc=post_hoc, run=run, pairs_total=len(rows))
    (folder / "run.json").write_text(json.dumps(meta))


# --- goldens and determinism --------------------------------------------------------------


def test_report_reproduces_the_golden_files_byte_for_byte(example_report) -> None:
    tables = example_report.out_dir / "tables"  # the headline preset in tables/headline/
    produced = {str(p.relative_to(tables)): p for p in tables.rglob("*") if p.is_file()}
    produced["macros.tex"] = example_report.macros
    produced["mutation-report.json"] = example_report.mutation_report
    expected = {str(p.relative_to(GOLDEN)): p for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(produced) == sorted(expected)
    for name, path in expected.items():
        assert produced[name].read_bytes() == path.read_bytes(), (
            f"{name} differs from its golden; if the change is intended, run "
            "`python tests/fixtures/make_example_run.py --goldens` and say why"
        )


def test_rerunning_gives_identical_bytes_including_the_plot(example_report, tmp_path) -> None:
    again = report(FIXTURE, tmp_path)
    first = sorted(p for p in example_report.out_dir.rglob("*") if p.is_file())
    second = sorted(p for p in again.out_dir.rglob("*") if p.is_file())
    assert [p.relative_to(example_report.out_dir) for p in first] == [
        p.relative_to(again.out_dir) for p in second
    ]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_the_goldens_hold_the_numbers_the_ledger_implies() -> None:
    """A guard on the goldens themselves: pooled M-PHANTOM is 10 of 15 (5 of 7 toy, 3 of 4
    agentdojo and 2 of 4 agentdojo-banking); toy M-PHANTOM's interval is the design-effect
    Wilson interval (n_eff 5.6 of 7), the pooled one has no correlation left (n_eff = n)."""
    csv_text = (GOLDEN / "closed_world_recall.csv").read_text()
    line = next(x for x in csv_text.splitlines() if ",pooled,M-PHANTOM," in x)
    fields = line.split(",")
    assert fields[4:9] == ["15", "15.000", "10", "5", "0"]
    assert fields[11] == "0.667"
    toy = next(x for x in csv_text.splitlines() if ",toy,M-PHANTOM," in x).split(",")
    assert toy[4:9] == ["7", "5.600", "5", "2", "0"]
    assert toy[11:14] == ["0.714", "0.326", "0.928"]
    assert f"{wilson_interval(5 / 7 * 5.6, 5.6)[0]:.3f}" == "0.326"
    macros = (GOLDEN / "macros.tex").read_text()
    assert "\\newcommand{\\RecallToyMPhantomDetected}{5}" in macros
    assert "\\newcommand{\\RecallRealMPhantomDetected}{5}" in macros
    assert f"{wilson_interval(10, 15)[0]:.3f}" == "0.417"
    assert "\\newcommand{\\RecallMPhantomLB}{0.417}" in macros


# --- tables -------------------------------------------------------------------------------


def test_real_and_toy_rows_are_separate_and_pooled() -> None:
    _, rows = load_run(FIXTURE)
    recall = {(r.scope, r.operator): r for r in closed_world_recall(ledger_frame(rows))}
    for operator in ("M-PHANTOM", ALL):
        toy, real = recall[(Scope.TOY, operator)], recall[(Scope.REAL, operator)]
        pooled = recall[(Scope.POOLED, operator)]
        assert pooled.counts.n == toy.counts.n + real.counts.n
        assert pooled.counts.detected == toy.counts.detected + real.counts.detected
    assert (Scope.REAL, "M-RESET") not in recall  # no agentdojo M-RESET pairs
    assert recall[(Scope.REAL, "M-IGNARG")].counts.untestable == 1
    # infra_error is shown and outside n; timeout + crash + compile_error are `error`
    reset = recall[(Scope.TOY, "M-RESET")].counts
    assert (reset.n, reset.infra, reset.error, reset.detected) == (5, 1, 2, 1)


def test_toy_only_ledger_has_no_real_rows() -> None:
    _, rows = load_run(FIXTURE)
    toy = [r for r in rows if r.target == "toy_domain"]
    scopes = {r.scope for r in closed_world_recall(ledger_frame(toy))}
    assert scopes == {Scope.TOY, Scope.POOLED}


def test_every_table_names_its_freeze_in_every_format() -> None:
    meta, rows = load_run(FIXTURE)
    tables = build_tables(rows, meta)
    assert [t.name for t in tables] == [
        "closed_world_recall",
        "closed_world_miss_causes",
        "control_specificity",
        "flag_precision",
        "negative_controls",
        "open_world_escapes",
        "open_world_miss_causes",
        "grader_arm",
        "grader_tasks_by_tool",
        "closed_world_recall_census",
        "open_world_escapes_census",
        "clause_yield",
        "per_tool",
        "predictions",
    ]
    for table in tables:
        assert meta.freeze_id in markdown(table).splitlines()[0]
        assert meta.freeze_id in render_latex(table)
        csv_lines = render_csv(table).splitlines()
        assert all(line.startswith(f"{meta.freeze_id},false,") for line in csv_lines[1:])
        assert "POST HOC" not in markdown(table)


def test_specificity_counts_a_flagged_control_as_false_positive() -> None:
    meta, rows = load_run(FIXTURE)
    table = next(t for t in build_tables(rows, meta) if t.name == "control_specificity")
    md = markdown(table)
    assert "| specificity | specificity 95% CI |" in md and "precision" not in md.split("\n")[2]
    # C-REORDER: 4 controls, one detected (flagged) → specificity 3/4, FP rate 1/4
    assert "| controls | C-REORDER | 4 | 3 | 1 | 0 | 0 | 0.750 | [0.301, 0.954] | 0.250 |" in md


def test_negative_control_misses_show_the_witness() -> None:
    meta, rows = load_run(FIXTURE)
    table = next(t for t in build_tables(rows, meta) if t.name == "negative_controls")
    md = markdown(table)
    assert "| NC-int-float | deposit | CONFORMS | VIOLATES | detected | miss | balance_after" in md
    assert "| NC-same-value | rename_meeting | CONFORMS | CONFORMS | missed | hit | — |" in md
    assert "no verdict (crash: RecursionError: depth)" in md


def test_open_world_escapes_and_causes() -> None:
    meta, rows = load_run(FIXTURE)
    tables = {t.name: t for t in build_tables(rows, meta)}
    md = markdown(tables["open_world_escapes"])
    # all: 11 mutants, 10 pairs in n (one infra), 8 live, 5 escapes (live and missed)
    # The pooled row says loudly that it mixes the two generators (issue 29, item 5).
    assert (
        "| all (POOLED GENERATORS: Cosmic Ray + mutmut) | 11 | 10 | 1 | 8 | 5 | 0.625 | "
        "[0.306, 0.863] |" in md
    )
    causes = markdown(tables["open_world_miss_causes"])
    assert "| no_clause | 2 | 0.400 | 2 |" in causes
    assert "| unreached | 0 | 0.000 | 2 |" in causes


def test_recall_rows_show_counted_only_rate_and_unknown_share_beside_the_bounds() -> None:
    meta, rows = load_run(FIXTURE)
    md = markdown(next(t for t in build_tables(rows, meta) if t.name == "closed_world_recall"))
    assert "| evidence bounds | P/(P+F) | U/N |" in md
    # real M-PRECOND: P 1, F 1, U 2 (untestable + timeout) of n 4 → bounds [0.25, 0.75]
    assert "| 0.250 | [0.046, 0.699] | [0.000, 0.750] | [0.250, 0.750] | 0.500 | 0.500 |" in md


def test_closed_world_misses_by_cause_per_operator_and_scope() -> None:
    meta, rows = load_run(FIXTURE)
    tables = {t.name: t for t in build_tables(rows, meta)}
    md = markdown(tables["closed_world_miss_causes"])
    assert "| missed | no_clause | probe_unrevealing | unreached | checker_crash |" in md
    # toy M-RESET: 2 misses (one unreached, one probe_unrevealing); crash and compile_error
    # pairs are undecided, not misses
    assert "| toy | M-RESET | 2 | 0 | 1 | 1 | 0 |" in md
    assert "| pooled | all | 8 | 4 | 2 | 2 | 0 |" in md


def test_post_hoc_run_is_labelled_everywhere(tmp_path) -> None:
    run = _copy_run(tmp_path / "run", lambda r: r.model_copy(update={"post_hoc": True}), True)
    result = report(run, tmp_path / "out")
    for path in result.tables:
        text = path.read_text()
        if path.suffix == ".csv":
            rows = text.splitlines()[1:]
            assert rows and all(line.split(",")[1] == "true" for line in rows)
        else:
            assert "POST HOC" in text, path.name
    assert "POST HOC" in result.macros.read_text().splitlines()[0]


def test_post_hoc_rows_mark_their_table_and_themselves(tmp_path) -> None:
    def reset_post_hoc(row: LedgerRow) -> LedgerRow:
        return row.model_copy(update={"post_hoc": row.operator == "M-RESET"})

    run = _copy_run(tmp_path / "run", reset_post_hoc)
    result = report(run, tmp_path / "out")
    recall = squeeze((result.out_dir / "tables" / "closed_world_recall.md").read_text())
    assert recall.startswith("### POST HOC: Closed-world recall")
    assert "| toy (post hoc) | M-RESET |" in recall
    assert "| toy | M-PHANTOM |" in recall
    specificity = squeeze((result.out_dir / "tables" / "control_specificity.md").read_text())
    assert "POST HOC" not in specificity


# --- grader arm ---------------------------------------------------------------------------

GRADER_TARGET = "agentdojo-banking"


def _without_grader_target(rows: list[LedgerRow]) -> list[LedgerRow]:
    return [r for r in rows if r.target != GRADER_TARGET]


def test_grader_arm_counts_on_the_fixture() -> None:
    """Twelve agentdojo-banking pairs: 10 with a grader verdict in the closed and open
    worlds (a compile_error and an infra_error carry none); no other target has a grader."""
    _, rows = load_run(FIXTURE)
    table = {(r.arm, r.operator): r for r in grader_arm(ledger_frame(rows))}
    assert list(table) == [
        ("closed_world", "M-PHANTOM"),
        ("closed_world", "M-PRECOND"),
        ("closed_world", ALL),
        ("open_world", "CR-core/NumberReplacer"),
        ("open_world", "MM-string"),
        ("open_world", ALL),
        (ALL, ALL),
    ]
    # (n, checker detected, grader caught, both, checker only, grader only, neither)
    expected = {
        ("closed_world", "M-PHANTOM"): (4, 2, 2, 1, 1, 1, 1),
        ("closed_world", "M-PRECOND"): (3, 1, 2, 1, 0, 1, 1),  # the untestable: neither
        ("closed_world", ALL): (7, 3, 4, 2, 1, 2, 2),
        ("open_world", "CR-core/NumberReplacer"): (2, 1, 2, 1, 0, 1, 0),
        ("open_world", "MM-string"): (1, 0, 0, 0, 0, 0, 1),
        ("open_world", ALL): (3, 1, 2, 1, 0, 1, 1),
        (ALL, ALL): (10, 4, 6, 3, 1, 3, 3),
    }
    for key, numbers in expected.items():
        r = table[key]
        got = (r.n, r.checker.x, r.grader.x, r.both, r.checker_only, r.grader_only, r.neither)
        assert got == numbers, key
        assert r.both + r.checker_only + r.grader_only + r.neither == r.n
    # The pooled grader interval is widened over tools like the recall table's: caught /
    # pairs per (target, tool) = schedule_transaction 1/2, send_money 4/4,
    # update_password 0/1, update_scheduled_transaction 0/1, update_user_info 1/2.
    pooled = table[(ALL, ALL)].grader
    clustered = clustered_wilson(6, [(1, 2), (4, 4), (0, 1), (0, 1), (1, 2)])
    assert clustered.deff > 1
    assert (pooled.clustered.lo, pooled.clustered.hi) == (clustered.lo, clustered.hi)


def test_grader_arm_table_and_macros() -> None:
    meta, rows = load_run(FIXTURE)
    table = next(t for t in build_tables(rows, meta) if t.name == "grader_arm")
    md = markdown(table)
    assert (
        "| closed_world | M-PHANTOM | 4 | 2 | 0.500 | [0.150, 0.850] | 2 | 0.500 | "
        "[0.125, 0.875] | 1 | 1 | 1 | 1 |"
    ) in md
    assert (
        "| all | all | 10 | 4 | 0.400 | [0.139, 0.734] | 6 | 0.600 | [0.283, 0.851] | "
        "3 | 1 | 3 | 3 |"
    ) in md
    macros = dict(table.macros())
    assert macros["GraderRecallMPhantom"] == 0.5
    assert macros["GraderRecallMPhantomChecker"] == 0.5
    assert macros["GraderRecallMPrecond"] == pytest.approx(2 / 3)
    assert macros["GraderRecallAllN"] == 10
    assert macros["GraderRecallOpenWorldAllCaught"] == 2


def test_grader_tasks_by_tool_on_the_fixture() -> None:
    meta, rows = load_run(FIXTURE)
    tools = {(r.target, r.tool): r for r in grader_tasks_by_tool(ledger_frame(rows))}
    assert {target for target, _ in tools} == {GRADER_TARGET}
    send = tools[(GRADER_TARGET, "send_money")]
    assert (send.pairs, send.caught) == (4, 4)  # the infra_error pair is not counted
    assert send.tasks == tuple(f"user_task_{i}" for i in (0, 2, 3, 4, 5, 10, 11, 12, 13, 15))
    password = tools[(GRADER_TARGET, "update_password")]
    assert (password.pairs, password.caught, password.tasks) == (1, 0, ())  # no compile_error
    schedule = tools[(GRADER_TARGET, "schedule_transaction")]
    assert (schedule.pairs, schedule.caught, schedule.tasks) == (
        2,
        1,
        ("user_task_6", "user_task_7"),
    )
    table = next(t for t in build_tables(rows, meta) if t.name == "grader_tasks_by_tool")
    md = markdown(table)
    assert (
        "| agentdojo-banking | send_money | 4 | 4 | 10 | user_task_0, user_task_2, "
        "user_task_3, user_task_4, … (+6 more) |"
    ) in md
    assert "| agentdojo-banking | update_password | 1 | 0 | 0 | — |" in md
    assert "user\\_task\\_4, \\ldots{} (+6 more)" in render_latex(table)


def test_task_list_text_and_order() -> None:
    assert task_list_text([]) is None
    assert task_list_text(["user_task_1", "user_task_2"]) == "user_task_1, user_task_2"
    assert task_list_text(["a" * 80, "b"]) == "a" * 80 + ", … (+1 more)"  # one at least
    assert task_list_text(["abc", "def", "ghi"], limit=8) == "abc, def, … (+1 more)"
    ids = ["user_task_10", "user_task_2", "injection_task_1", "user_task_x"]
    assert sorted(ids, key=task_order) == [
        "injection_task_1",
        "user_task_2",
        "user_task_10",
        "user_task_x",
    ]


def test_grader_tables_leave_out_controls_and_rows_without_a_verdict() -> None:
    _, rows = load_run(FIXTURE)
    control = _row(PairStatus.MISSED, miss_cause=MissCause.UNREACHED).model_copy(
        update={
            "arm": "controls",
            "operator": "C-REORDER",
            "defect_class": None,
            "target": GRADER_TARGET,
            "tool": "send_money",
            "grader_caught": True,
            "grader_tasks": ["user_task_1"],
        }
    )
    crash = _row(PairStatus.CRASH).model_copy(update={"target": GRADER_TARGET})
    before = [(r.n, r.grader.x) for r in grader_arm(ledger_frame(rows))]
    assert [(r.n, r.grader.x) for r in grader_arm(ledger_frame([*rows, control, crash]))] == before
    tools = grader_tasks_by_tool(ledger_frame([*rows, control, crash]))
    assert tools == grader_tasks_by_tool(ledger_frame(rows))


def test_no_grader_data_omits_the_grader_tables(example_report, tmp_path) -> None:
    assert NO_GRADER_NOTE not in example_report.notes
    meta, rows = load_run(FIXTURE)
    toy = _without_grader_target(rows)
    names = [t.name for t in build_tables(toy, meta)]
    assert "grader_arm" not in names and "grader_tasks_by_tool" not in names
    _write_run(tmp_path / "run", toy)
    result = report(tmp_path / "run", tmp_path / "out")
    assert NO_GRADER_NOTE in result.notes
    assert not any(p.name.startswith("grader_") for p in result.tables)
    assert "Grader" not in result.macros.read_text()
    negative = "negative_controls.md"  # no agentdojo-banking rows: as in the full fixture
    assert (result.out_dir / "tables" / negative).read_bytes() == (GOLDEN / negative).read_bytes()


def test_version_one_rows_parse_and_report(tmp_path) -> None:
    """Rows written before the grader arm (schema version 1) lack grader_caught and
    grader_tasks: they read as null and [] and report as before, with no grader tables."""
    lines = (FIXTURE / "ledger.jsonl").read_text().splitlines()
    old = [line for line in lines if json.loads(line)["schema_version"] == 1]
    assert len(old) == 44
    for line in old:
        assert "grader_caught" not in json.loads(line) and "grader_tasks" not in line
    row = LedgerRow.model_validate_json(old[0])
    assert (row.schema_version, row.grader_caught, row.grader_tasks) == (1, None, [])
    run = tmp_path / "v1"
    run.mkdir()
    (run / "ledger.jsonl").write_text("\n".join(old) + "\n")
    (run / "run.json").write_text((FIXTURE / "run.json").read_text())
    _, rows = load_run(run)
    assert len(rows) == 44 and all(r.grader_caught is None for r in rows)
    assert grader_arm(ledger_frame(rows)) == [] and grader_tasks_by_tool(ledger_frame(rows)) == []
    result = report(run, tmp_path / "out")
    assert NO_GRADER_NOTE in result.notes
    assert not any(p.name.startswith("grader_") for p in result.tables)
    recall = squeeze((result.out_dir / "tables" / "closed_world_recall.md").read_text())
    pooled = "| pooled | M-PHANTOM | 11 | 10.225 | 8 | 3 | 0 | 0 | 0 | 0.727 | [0.424, 0.906] |"
    assert pooled in recall  # the numbers of the ledger before the grader rows were added


# --- LaTeX, macros, plot ------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_tables_and_macros_compile(example_report, tmp_path) -> None:
    inputs = "\n".join(f"\\input{{{p}}}" for p in example_report.tables if p.suffix == ".tex")
    document = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n"
        f"\\input{{{example_report.macros}}}\n\\begin{{document}}\n{inputs}\n"
        "Recall \\RecallMPhantom{} (lower bound \\RecallMPhantomLB), freeze \\FreezeId.\n"
        "\\end{document}\n"
    )
    (tmp_path / "doc.tex").write_text(document)
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "doc.pdf").read_bytes().startswith(b"%PDF")


def test_latex_escapes_special_characters() -> None:
    meta, rows = load_run(FIXTURE)
    table = next(t for t in build_tables(rows, meta) if t.name == "negative_controls")
    tex = render_latex(table)
    assert "balance\\_after $\\neq$ balance\\_before + amount on 50\\% of probes \\& \\#2" in tex
    for command in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert command in tex


def test_macro_names_are_valid_and_unique(example_report) -> None:
    names = []
    for line in example_report.macros.read_text().splitlines():
        if line.startswith("%"):
            continue
        match = NEWCOMMAND.match(line)
        assert match, line
        names.append(match.group(1))
    assert all(MACRO_NAME.match(name) for name in names)
    assert len(names) == len(set(names))
    for expected in (
        "RecallMPhantomLB",
        "RecallRealMPhantomLB",
        "RecallToyMResetN",
        "SpecificityAllLB",
        "SpecificityControlsCReorderFPRateUB",
        "EscapeAllLB",
        "EscapeCRcoreFamilyPlainLB",
        "EscapeCauseNoClauseEscapes",
        "NegativeControlHits",
        "ToolClosedWorldAgentdojoSendEmailN",
        "GraderRecallMPhantom",
        "GraderRecallMPhantomLB",
        "GraderRecallMPhantomCheckerUB",
        "GraderRecallCRcoreNumberReplacerGraderOnly",
        "GraderRecallClosedWorldAllN",
        "GraderRecallAllBoth",
        "GraderTasksAgentdojobankingSendMoneyTasks",
        "FreezeId",
    ):
        assert expected in names, expected


def test_macro_word_scheme() -> None:
    assert macro_word("M-PHANTOM") == "MPhantom"
    expected = "CRcoreReplaceBinaryOperatorAddSub"
    assert macro_word("CR-core/ReplaceBinaryOperator_Add_Sub") == expected
    assert macro_word("MM-number_2x") == "MMnumberTwox"
    assert macro_word("no_clause") == "NoClause"
    assert macro_word("toy_domain") == "ToyDomain"
    assert macro_word("NC-same-value") == "NCsamevalue"
    assert unique_names(["A", "A", "B", "A"]) == ["A", "AB", "B", "AC"]


def test_forest_plot_is_a_readable_png(example_report) -> None:
    assert example_report.figure is not None
    data = example_report.figure.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert b"Software" not in data and b"matplotlib" not in data.lower()
    image = matplotlib.image.imread(example_report.figure)
    operators = 4 + 1  # M-IGNARG, M-PHANTOM, M-PRECOND, M-RESET and all
    height = round((MARGIN_INCHES + ROW_INCHES * operators) * DPI)
    assert image.shape == (height, round(WIDTH_INCHES * DPI), 4)
    assert image[..., :3].min() < 0.5  # something is drawn


def test_main_tables_render_with_rich() -> None:
    meta, rows = load_run(FIXTURE)
    tables = main_tables(rows, meta)
    # the grader arm too (the run has grader data), flag precision, and predictions last
    assert len(tables) == 7
    assert str(tables[-1].title).startswith("Predictions of the plan")
    console = Console(record=True, width=250)
    for table in tables:
        console.print(table)
    text = console.export_text()
    assert meta.freeze_id in text and "[0.417, 0.848]" in text
    assert "Grader arm" in text and "[0.283, 0.851]" in text


def test_main_tables_without_grader_data_are_the_six() -> None:
    meta, rows = load_run(FIXTURE)
    titles = [str(t.title) for t in main_tables(_without_grader_target(rows), meta)]
    assert len(titles) == 6 and not any("Grader" in title for title in titles)


# --- mutation-testing-elements report -----------------------------------------------------


def test_mutation_report_without_a_corpus_says_so(example_report) -> None:
    assert any("no mutant locations" in note for note in example_report.notes)
    payload = json.loads(example_report.mutation_report.read_text())
    assert payload["schemaVersion"] == "1"
    assert payload["thresholds"] == {"high": 80, "low": 60}
    assert payload["config"]["locations"] == "unknown (no drawn corpus)"
    mutants = [m for f in payload["files"].values() for m in f["mutants"]]
    _, rows = load_run(FIXTURE)
    reported = [r for r in rows if r.arm in ("closed_world", "open_world")]
    assert sorted(m["id"] for m in mutants) == sorted(r.pair_id for r in reported)
    statuses = {m["status"] for m in mutants}
    assert statuses == {
        "Killed",
        "Survived",
        "NoCoverage",
        "Timeout",
        "CompileError",
        "RuntimeError",
        "Ignored",
    }
    for file in payload["files"].values():
        assert file["language"] == "python" and file["source"] == ""


def _site(start: int, end: int) -> FunctionSite:
    return FunctionSite(
        module="toy_domain.bank",
        file="toy_domain/bank.py",
        qualname="deposit",
        start_line=start,
        end_line=end,
        source_hash="0" * 64,
    )


def test_mutation_report_places_mutants_at_their_site(tmp_path) -> None:
    import toy_domain

    _, rows = load_run(FIXTURE)
    run = tmp_path / "results" / "example" / "r1"
    _copy_run(run)
    killed = next(r for r in rows if r.status is PairStatus.DETECTED and r.arm == "closed_world")
    unreached = next(r for r in rows if r.miss_cause is MissCause.UNREACHED)
    pairs = [
        DrawnPair(
            pair_id=row.pair_id,
            arm=row.arm,
            tool=row.tool,
            mutant=Mutant(
                id=row.mutant_id,
                arm=Arm(row.arm),
                operator=row.operator,
                defect_class=row.defect_class,
                target=row.target,
                target_version=row.target_version,
                site=_site(10, 12),
                occurrence=0,
                mutated_source="",
                diff="",
            ),
        )
        for row in (killed, unreached)
    ]
    corpus = Corpus(plan="example", seed=1, pairs=pairs, liveness={})
    (tmp_path / "mutants" / "example").mkdir(parents=True)
    (tmp_path / "mutants" / "example" / "manifest.json").write_text(corpus.model_dump_json())
    result = report(run, tmp_path / "out")
    assert result.notes == ()
    payload = json.loads(result.mutation_report.read_text())
    assert payload["config"]["locations"] == "from the drawn corpus"
    bank = payload["files"]["toy_domain/bank.py"]
    source = (Path(toy_domain.__file__).parent / "bank.py").read_text()
    assert bank["source"] == source
    by_id = {m["id"]: m for m in bank["mutants"]}
    assert set(by_id) == {killed.pair_id, unreached.pair_id}
    located = by_id[killed.pair_id]
    end_column = len(source.splitlines()[11]) + 1
    assert located["location"] == {
        "start": {"line": 10, "column": 1},
        "end": {"line": 12, "column": end_column},
    }
    assert located["status"] == "Killed"
    assert located["killedBy"] == [
        f"toy_domain/{killed.tool}#{v.clause_id}" for v in killed.new_violations
    ]
    # The clauses are the schema's tests, named by their clause ids, one file per tool.
    tests = payload["testFiles"][f"contracts/toy_domain/{killed.tool}"]["tests"]
    assert {t["name"] for t in tests} >= {v.clause_id for v in killed.new_violations}
    assert "coveredBy" not in located  # a row before ledger version 4 did not record it
    assert by_id[unreached.pair_id]["status"] == "NoCoverage"


def _row(status: PairStatus, **fields) -> LedgerRow:
    return LedgerRow(
        pair_id="m:t",
        mutant_id="m",
        tool="t",
        arm="closed_world",
        operator="M-RESET",
        defect_class=DefectClass.RESET_LEAK,
        target="toy_domain",
        target_version="1",
        freeze_id="f",
        status=status,
        timing=Timing(seconds=0, started_at="x"),
        **fields,
    )


@pytest.mark.parametrize(
    ("status", "fields", "expected"),
    [
        (PairStatus.DETECTED, {}, "Killed"),
        (PairStatus.MISSED, {"miss_cause": MissCause.NO_CLAUSE}, "Survived"),
        (PairStatus.MISSED, {"miss_cause": MissCause.UNREACHED}, "NoCoverage"),
        (PairStatus.UNTESTABLE, {}, "Survived"),
        (PairStatus.TIMEOUT, {}, "Timeout"),
        (PairStatus.COMPILE_ERROR, {}, "CompileError"),
        (PairStatus.CRASH, {}, "RuntimeError"),
        (PairStatus.INFRA_ERROR, {"error": "x"}, "Ignored"),
    ],
)
def test_status_mapping(status: PairStatus, fields: dict, expected: str) -> None:
    mapped, reason = status_of(_row(status, **fields))
    assert mapped == expected
    if status is PairStatus.UNTESTABLE:
        assert reason and reason.startswith("untestable")


# --- compare ------------------------------------------------------------------------------


def _pairs(operator: str, detected: int, total: int, tools: int) -> list[LedgerRow]:
    """`total` pairs of `operator` spread over `tools` tools, the first `detected` detected."""
    return [
        _row(
            PairStatus.DETECTED if i < detected else PairStatus.MISSED,
            miss_cause=None if i < detected else MissCause.NO_CLAUSE,
        ).model_copy(
            update={
                "pair_id": f"{operator}-{i}:tool{i % tools}",
                "mutant_id": f"{operator}-{i}",
                "tool": f"tool{i % tools}",
                "operator": operator,
            }
        )
        for i in range(total)
    ]


def _compare(tmp_path: Path, changed_a: int, changed_b: int, total: int):
    shared = _pairs("M-PHANTOM", 6, 10, 5) + _pairs("M-PRECOND", 9, 10, 5)
    run_a, run_b = tmp_path / "a", tmp_path / "b"
    _write_run(run_a, shared + _pairs("M-RESET", changed_a, total, 10), run="A")
    _write_run(run_b, shared + _pairs("M-RESET", changed_b, total, 10), run="B")
    return compare(run_a, run_b)


def test_compare_claims_a_direction_where_the_bounds_separate(tmp_path) -> None:
    result = _compare(tmp_path, changed_a=28, changed_b=3, total=30)
    reset = result.row("closed_world", "M-RESET")
    assert (reset.support, reset.robust) == ("A>B", "A>B")
    for operator in ("M-PHANTOM", "M-PRECOND"):  # the same pairs in both runs
        row = result.row("closed_world", operator)
        assert (row.support, row.robust) == ("?", "?")
    flipped = compare(tmp_path / "b", tmp_path / "a").row("closed_world", "M-RESET")
    assert (flipped.support, flipped.robust) == ("B>A", "B>A")
    md = markdown(comparison_table(result))
    assert "A 0f1e2d3c4b5a6978, B 0f1e2d3c4b5a6978" in md.splitlines()[0]
    assert "| closed_world | M-RESET | 30 | 28 |" in md and "| A>B | A>B |" in md
    assert "support claim (evidence bounds) | sampling-robust claim (Wilson-widened) |" in md


def test_support_rule_decides_where_only_sampling_could_explain_the_gap(tmp_path) -> None:
    """7 of 12 against 5 of 12, nothing undecided: the evidence bounds are points and
    separate (support A>B); the Wilson-widened ranges overlap (sampling-robust ?)."""
    result = _compare(tmp_path, changed_a=7, changed_b=5, total=12)
    row = result.row("closed_world", "M-RESET")
    assert row.a is not None and row.b is not None
    assert row.a.counts.evidence == (7 / 12, 7 / 12) and row.b.counts.evidence == (5 / 12, 5 / 12)
    assert (row.support, row.robust) == ("A>B", "?")
    assert result.decided() == (2, 0)  # M-RESET and the closed_world `all` row


def test_compare_by_scope_lines_up_scopes_and_says_how_much_narrower_b_is(tmp_path) -> None:
    """A sampled run (8 of 10) beside an exhaustive one (32 of 40): the same rate, and B's
    interval narrower; by scope, toy then real then pooled, as the recall table."""
    real = [
        r.model_copy(update={"target": "agentdojo-banking", "pair_id": "r" + r.pair_id})
        for r in _pairs("M-RESET", 3, 4, 2)
    ]
    _write_run(tmp_path / "a", _pairs("M-RESET", 8, 10, 5) + real, run="A")
    _write_run(tmp_path / "b", _pairs("M-RESET", 32, 40, 10) + real, run="B")
    result = compare(tmp_path / "a", tmp_path / "b", by="scope")
    names = list(dict.fromkeys(r.arm for r in result.rows))
    assert names == ["closed_world toy", "closed_world real", "closed_world pooled"]
    toy = result.row("closed_world toy", "M-RESET")
    assert toy.a is not None and toy.b is not None and toy.a.rate == toy.b.rate == 0.8
    assert toy.width_ratio is not None and 0.4 < toy.width_ratio < 0.7
    assert result.row("closed_world real", "M-RESET").width_ratio == 1.0  # the same pairs
    assert result.row("closed_world pooled", "M-RESET").b.counts.n == 44  # type: ignore[union-attr]
    md = markdown(comparison_table(result))
    assert "| arm kind, scope " in md and "CI width B/A |" in md
    by_arm = compare(tmp_path / "a", tmp_path / "b")
    assert [r.arm for r in by_arm.rows] == ["closed_world", "closed_world"]


def _undecided(operator: str, detected: int, untestable: int, tools: int) -> list[LedgerRow]:
    rows = _pairs(operator, detected, detected + untestable, tools)
    return [
        r
        if r.status is PairStatus.DETECTED
        else r.model_copy(update={"status": PairStatus.UNTESTABLE, "miss_cause": None})
        for r in rows
    ]


def test_support_rule_says_nothing_where_undecided_pairs_bridge_the_gap(tmp_path) -> None:
    # A: 5 detected, 7 untestable → [0.417, 1.0]; B: 8 of 12 → [0.667, 0.667]; they overlap
    run_a, run_b = tmp_path / "a", tmp_path / "b"
    _write_run(run_a, _undecided("M-RESET", 5, 7, 4), run="A")
    _write_run(run_b, _pairs("M-RESET", 8, 12, 4), run="B")
    row = compare(run_a, run_b).row("closed_world", "M-RESET")
    assert row.a is not None and row.b is not None
    assert (row.support, row.robust) == ("?", "?")
    assert row.a.counted_only == 1.0 and row.a.unknown_share == 7 / 12
    assert row.b.counted_only == 8 / 12 and row.b.unknown_share == 0.0
    md = markdown(comparison_table(compare(run_a, run_b)))
    # n, detected, rate, P/(P+F), U/N, evidence of A
    assert "| closed_world | M-RESET | 12 | 5 | 0.417 | 1.000 | 0.583 | [0.417, 1.000] |" in md


def test_rows_of_another_freeze_are_noted(tmp_path) -> None:
    def other(row: LedgerRow) -> LedgerRow:
        return (
            row.model_copy(update={"freeze_id": "feedfacefeedface"})
            if row.tool == "deposit"
            else row
        )

    meta, rows = load_run(_copy_run(tmp_path / "run", other))
    for table in build_tables(rows, meta):
        assert "rows also carry freeze ids feedfacefeedface" in markdown(table)


def test_a_folder_without_a_run_is_a_user_error(tmp_path) -> None:
    from harness.errors import UserError

    with pytest.raises(UserError, match=r"no run\.json"):
        report(tmp_path)
    (tmp_path / "run.json").write_text((FIXTURE / "run.json").read_text())
    with pytest.raises(UserError, match=r"no ledger\.jsonl"):
        report(tmp_path)

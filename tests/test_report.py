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
from harness.analysis.macros import MACRO_NAME, macro_word, unique_names
from harness.analysis.mutation_report import status_of
from harness.analysis.plots import DPI, MARGIN_INCHES, ROW_INCHES, WIDTH_INCHES
from harness.analysis.render import render_csv, render_latex, render_markdown
from harness.analysis.runs import load_run
from harness.analysis.scoring import ALL, Scope, closed_world_recall
from harness.analysis.tables import build_tables
from harness.checker.verdicts import DefectClass
from harness.execution.draw import Corpus, DrawnPair
from harness.execution.ledger import LedgerRow, MissCause, PairStatus, Timing
from harness.mutation.model import Arm, FunctionSite, Mutant

FIXTURE = Path(__file__).parent / "fixtures" / "example_run"
GOLDEN = FIXTURE / "expected_tables"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NEWCOMMAND = re.compile(r"^\\newcommand\{\\([^}]*)\}\{([^}]*)\}$")


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
    meta.update(post_hoc=post_hoc, run=run)
    (folder / "run.json").write_text(json.dumps(meta))


# --- goldens and determinism --------------------------------------------------------------


def test_report_reproduces_the_golden_files_byte_for_byte(example_report) -> None:
    produced = {p.name: p for p in (example_report.out_dir / "tables").iterdir()}
    produced["macros.tex"] = example_report.macros
    produced["mutation-report.json"] = example_report.mutation_report
    expected = {p.name: p for p in GOLDEN.iterdir()}
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
    """A guard on the goldens themselves: pooled M-PHANTOM is 8 of 11 (5 of 7 toy, 3 of 4
    real) and its interval is the design-effect Wilson interval."""
    csv_text = (GOLDEN / "closed_world_recall.csv").read_text()
    line = next(x for x in csv_text.splitlines() if ",pooled,M-PHANTOM," in x)
    fields = line.split(",")
    assert fields[4:9] == ["11", "10.225", "8", "3", "0"]
    assert fields[11] == "0.727"
    macros = (GOLDEN / "macros.tex").read_text()
    assert "\\newcommand{\\RecallToyMPhantomDetected}{5}" in macros
    assert "\\newcommand{\\RecallRealMPhantomDetected}{3}" in macros
    assert "\\newcommand{\\RecallMPhantomLB}{0.424}" in macros


# --- tables -------------------------------------------------------------------------------


def test_real_and_toy_rows_are_separate_and_pooled() -> None:
    _, rows = load_run(FIXTURE)
    recall = {(r.scope, r.operator): r for r in closed_world_recall(rows)}
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
    scopes = {r.scope for r in closed_world_recall(toy)}
    assert scopes == {Scope.TOY, Scope.POOLED}


def test_every_table_names_its_freeze_in_every_format() -> None:
    meta, rows = load_run(FIXTURE)
    tables = build_tables(rows, meta)
    assert [t.name for t in tables] == [
        "closed_world_recall",
        "control_precision",
        "negative_controls",
        "open_world_escapes",
        "open_world_miss_causes",
        "per_tool",
    ]
    for table in tables:
        assert meta.freeze_id in render_markdown(table).splitlines()[0]
        assert meta.freeze_id in render_latex(table)
        csv_lines = render_csv(table).splitlines()
        assert all(line.startswith(f"{meta.freeze_id},false,") for line in csv_lines[1:])
        assert "POST HOC" not in render_markdown(table)


def test_precision_counts_a_flagged_control_as_false_positive() -> None:
    meta, rows = load_run(FIXTURE)
    table = next(t for t in build_tables(rows, meta) if t.name == "control_precision")
    md = render_markdown(table)
    # C-REORDER: 4 controls, one detected (flagged) → precision 3/4, FP rate 1/4, both shown
    assert "| controls | C-REORDER | 4 | 3 | 1 | 0 | 0 | 0.750 | [0.301, 0.954] | 0.250 |" in md


def test_negative_control_misses_show_the_witness() -> None:
    meta, rows = load_run(FIXTURE)
    table = next(t for t in build_tables(rows, meta) if t.name == "negative_controls")
    md = render_markdown(table)
    assert "| NC-int-float | deposit | CONFORMS | VIOLATES | detected | miss | balance_after" in md
    assert "| NC-same-value | rename_meeting | CONFORMS | CONFORMS | missed | hit | — |" in md
    assert "no verdict (crash: RecursionError: depth)" in md


def test_open_world_escapes_and_causes() -> None:
    meta, rows = load_run(FIXTURE)
    tables = {t.name: t for t in build_tables(rows, meta)}
    md = render_markdown(tables["open_world_escapes"])
    # all: 8 mutants, 7 pairs in n (one infra), 6 live, 4 escapes (live and missed)
    assert "| all | 8 | 7 | 1 | 6 | 4 | 0.667 | [0.300, 0.903] |" in md
    causes = render_markdown(tables["open_world_miss_causes"])
    assert "| no_clause | 2 | 0.500 | 2 |" in causes
    assert "| unreached | 0 | 0.000 | 1 |" in causes


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
    recall = (result.out_dir / "tables" / "closed_world_recall.md").read_text()
    assert recall.startswith("### POST HOC: Closed-world recall")
    assert "| toy (post hoc) | M-RESET |" in recall
    assert "| toy | M-PHANTOM |" in recall
    precision = (result.out_dir / "tables" / "control_precision.md").read_text()
    assert "POST HOC" not in precision


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
        "PrecisionAllLB",
        "PrecisionControlsCReorderFPRateUB",
        "EscapeAllLB",
        "EscapeCRcoreFamilyPlainLB",
        "EscapeCauseNoClauseEscapes",
        "NegativeControlHits",
        "ToolClosedWorldAgentdojoSendEmailN",
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
    assert len(tables) == 4
    console = Console(record=True, width=250)
    for table in tables:
        console.print(table)
    text = console.export_text()
    assert meta.freeze_id in text and "[0.424, 0.906]" in text


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
    assert located["killedBy"] == [v.clause_id for v in killed.new_violations]
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
    assert result.claim("closed_world", "M-RESET") == "A>B"
    assert result.claim("closed_world", "M-PHANTOM") == "?"
    assert result.claim("closed_world", "M-PRECOND") == "?"
    flipped = compare(tmp_path / "b", tmp_path / "a")
    assert flipped.claim("closed_world", "M-RESET") == "B>A"
    md = render_markdown(comparison_table(result))
    assert "A 0f1e2d3c4b5a6978, B 0f1e2d3c4b5a6978" in md.splitlines()[0]
    assert "| closed_world | M-RESET | 30 | 28 |" in md and "| A>B |" in md


def test_compare_says_nothing_where_the_bounds_overlap(tmp_path) -> None:
    # 7 of 12 against 5 of 12: the point estimates differ, the intervals overlap.
    result = _compare(tmp_path, changed_a=7, changed_b=5, total=12)
    assert {row.claim for row in result.rows} == {"?"}
    row = next(r for r in result.rows if r.operator == "M-RESET")
    assert row.a is not None and row.b is not None
    assert row.a.counts.detected == 7 and row.b.counts.detected == 5


def test_compare_needs_sampling_and_evidence_to_separate(tmp_path) -> None:
    """Evidence bounds alone separate (no undecided pairs) but Wilson intervals overlap."""
    result = _compare(tmp_path, changed_a=9, changed_b=6, total=12)
    row = next(r for r in result.rows if r.operator == "M-RESET")
    assert row.a is not None and row.b is not None
    assert row.a.counts.evidence[0] > row.b.counts.evidence[1]
    assert row.claim == "?"


def test_rows_of_another_freeze_are_noted(tmp_path) -> None:
    def other(row: LedgerRow) -> LedgerRow:
        return (
            row.model_copy(update={"freeze_id": "feedfacefeedface"})
            if row.tool == "deposit"
            else row
        )

    meta, rows = load_run(_copy_run(tmp_path / "run", other))
    for table in build_tables(rows, meta):
        assert "rows also carry freeze ids feedfacefeedface" in render_markdown(table)


def test_a_folder_without_a_run_is_a_user_error(tmp_path) -> None:
    from harness.errors import UserError

    with pytest.raises(UserError, match=r"no run\.json"):
        report(tmp_path)
    (tmp_path / "run.json").write_text((FIXTURE / "run.json").read_text())
    with pytest.raises(UserError, match=r"no ledger\.jsonl"):
        report(tmp_path)

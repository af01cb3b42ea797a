"""`harness report`: everything from one run folder, offline. Reads ledger.jsonl and
run.json; writes, under the output folder:

  tables/<table>.md|.tex|.csv   every table in three formats (the grader tables,
                                grader_arm and grader_tasks_by_tool, only when some
                                pair has a grader verdict; pool_screening, the pool per
                                operator before and after each screen, for corpora
                                drawn with screening)
  recall-forest.png             per-operator closed-world recall intervals
  macros.tex                    one \\newcommand per number (scheme: harness.analysis.macros)
  (tables/predictions.*)        every prediction of the plan scored (run.json's copy, or
                                the plan file the run's freeze hashed)
  report.html                   the page to browse: headline tables, forest plot, every
                                pair (harness.analysis.html_report)
  mutation-report.json          Stryker's mutation-testing-elements schema (validated;
                                each mutant at the exact span its diff changes)

Re-running on the same ledger gives byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rich.table import Table as RichTable

from harness.analysis.frame import ledger_frame
from harness.analysis.html_report import render_html
from harness.analysis.macros import render_macros
from harness.analysis.mutation_report import mutation_report, validate_report
from harness.analysis.predictions import PredictionRow, score_frame_predictions
from harness.analysis.render import (
    latex_escape,
    number,
    render_csv,
    render_latex,
    render_markdown,
    to_rich,
)
from harness.analysis.runs import (
    RunMeta,
    TornLine,
    incomplete,
    ledger_read,
    load_corpus_for,
    load_run_meta,
    with_frozen_predictions,
)
from harness.analysis.scoring import Scope, closed_world_recall, open_world_escapes, with_grader
from harness.analysis.tables import Table, build_tables
from harness.errors import Problem, UserError
from harness.execution.atomic import all_or_nothing, staged_folder
from harness.execution.draw import Corpus
from harness.execution.ledger import LedgerRow

TABLES_DIR = "tables"
FOREST_PLOT = "recall-forest.png"
MACROS = "macros.tex"
MUTATION_REPORT = "mutation-report.json"
REPORT_HTML = "report.html"
MAIN_TABLES = (
    "closed_world_recall",
    "closed_world_axes",  # only when the run has observation-clause operators
    "control_specificity",
    "flag_precision",
    "negative_controls",
    "open_world_escapes",
    "grader_arm",  # only when the run has grader data
    "pool_screening",  # only for corpora drawn with screening
    "predictions",  # last: every prediction of the plan, scored
)
NO_GRADER_NOTE = (
    "no closed- or open-world pair has a grader verdict (grader_caught): no grader tables"
)
RENDERERS = ((".md", render_markdown), (".tex", render_latex), (".csv", render_csv))


@dataclass(frozen=True)
class ReportResult:
    out_dir: Path
    tables: tuple[Path, ...]
    figure: Path | None
    macros: Path
    mutation_report: Path
    notes: tuple[str, ...]  # what the report could not do, for the CLI to print
    html: Path
    predictions: tuple[PredictionRow, ...] = ()


def main_tables(
    rows: Sequence[LedgerRow], run: RunMeta, width: int | None = None
) -> list[RichTable]:
    """The tables `harness run` prints at its end (those of them that have rows), fitted
    to a terminal `width` characters wide."""
    return [to_rich(t, width) for t in build_tables(rows, run) if t.name in MAIN_TABLES]


def _write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))  # bytes: no newline translation anywhere


def write_tables(tables: Sequence[Table], folder: Path) -> list[Path]:
    """Replace `folder` whole with the tables' files (no stale table from an older report)."""
    with staged_folder(folder) as tmp:
        names = _table_files(tables, tmp)
    return [folder / name for name in names]


def _table_files(tables: Sequence[Table], tmp: Path) -> list[str]:
    names = []
    for table in tables:
        for suffix, render in RENDERERS:
            _write(tmp / f"{table.name}{suffix}", render(table))
            names.append(f"{table.name}{suffix}")
    return names


def _headline_files(tables: Sequence[Table], tmp: Path) -> list[str]:
    """The headline preset of the tables that have one (harness.analysis.headline), as
    LaTeX in `headline/`: the tables a paper prints; the full ones are its appendix."""
    from harness.analysis.headline import HEADLINE_DIR, headline_tables, render_headline_latex

    names = []
    for table in headline_tables(tables):
        name = f"{HEADLINE_DIR}/{table.name}.tex"
        (tmp / HEADLINE_DIR).mkdir(parents=True, exist_ok=True)
        _write(tmp / name, render_headline_latex(table))
        names.append(name)
    return names


def macros_text(tables: Sequence[Table], run: RunMeta, unfinished: str | None = None) -> str:
    header = [
        f"Numbers of run {run.run} of plan {run.plan}, freeze {run.freeze_id}"
        + (" -- POST HOC" if run.post_hoc or any(t.post_hoc for t in tables) else "")
        + (f" -- {unfinished.upper()}" if unfinished else "")
        + ". Generated by harness report; do not edit.",
        "Names: <Table><Row><Statistic>, letters only; see harness/analysis/macros.py.",
    ]
    entries = [("FreezeId", latex_escape(run.freeze_id))]
    for table in tables:
        entries += [
            (name, str(value) if isinstance(value, int) else number(value))
            for name, value in table.macros()
        ]
    return render_macros(entries, header)


@cache
def _installed_source(target: str, file: str) -> str:
    from harness.targets.registry import resolve_adapter

    try:
        return (resolve_adapter(target).source_root() / file).read_text(encoding="utf-8")
    except Exception:  # an unknown or broken target: the report goes on without its source
        return ""


def mutation_payload(
    run_dir: Path, run: RunMeta, rows: list[LedgerRow]
) -> tuple[dict[str, Any], Corpus | None, str]:
    """The run's mutation-testing-elements report as written to mutation-report.json
    (validated: a failure is our bug, and nothing invalid is written), the drawn corpus it
    locates mutants by, and why there is none. `run` carries the ledger's `incomplete` state.
    """
    corpus, why = load_corpus_for(run_dir, run.plan)
    config: dict[str, str | bool] = {
        "plan": run.plan,
        "run": run.run,
        "freezeId": run.freeze_id,
        "postHoc": run.post_hoc,
        "locations": "from the drawn corpus" if corpus else "unknown (no drawn corpus)",
    }
    if run.unfinished(len(rows)):
        config["unfinished"] = run.unfinished(len(rows)) or ""
    if run.incomplete:
        config["incomplete"] = run.incomplete
    stryker = mutation_report(rows, corpus, _installed_source, config)
    payload = stryker.model_dump(mode="json", exclude_none=True)
    validate_report(payload)
    return payload, corpus, why


def _check_outputs(out_dir: Path) -> None:
    """Refuse, before anything is written, an output folder or output that is the wrong
    kind of thing (a file where the folder goes, a folder where a file goes)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(Problem(str(out_dir), "--out", "is a file", "name a folder to write"))
    tables = out_dir / TABLES_DIR
    wrong = [(tables, "a file")] if tables.exists() and not tables.is_dir() else []
    files = (FOREST_PLOT, MACROS, MUTATION_REPORT, REPORT_HTML)
    wrong += [(out_dir / name, "a folder") for name in files if (out_dir / name).is_dir()]
    if wrong:
        raise UserError(
            [
                Problem(
                    str(path),
                    "--out",
                    f"is {kind}, where the report writes its own",
                    "move it away, or pass another --out",
                )
                for path, kind in wrong
            ]
        )


def report(
    run_dir: Path,
    out_dir: Path | None = None,
    strict: bool = False,
    coverage: Sequence[Path] = (),
) -> ReportResult:
    """Write every output of the run; a torn last line or an unfinished run is noted (and
    marked in every title and caption), or, with `strict`, refused before anything is
    written. `coverage`: contract-coverage JSON files shown in a section of report.html."""
    run = load_run_meta(run_dir)
    read = ledger_read(run_dir)
    rows = read.rows
    torn = None if read.torn is None else TornLine(read.path, read.torn)
    state = incomplete(run_dir, read)
    run = run.model_copy(update={"incomplete": state})
    # one label for every title, caption and header: unfinished, short or altered
    unfinished = "; ".join(filter(None, (state, run.unfinished(len(rows))))) or None
    if strict and (torn or unfinished):
        problems = []
        if state:
            problems.append(
                Problem(
                    str(read.path),
                    "rows",
                    f"the ledger is not the whole one its run wrote ({state})",
                    "restore the ledger from the run, or run the plan again into a new folder",
                )
            )
        if torn:
            problems.append(
                Problem(str(torn.path), f"line {torn.line}", "is torn", "finish the run first")
            )
        if run.unfinished(len(rows)):
            problems.append(
                Problem(
                    str(run_dir / "run.json"),
                    "ended_at",
                    f"the run has not ended ({run.unfinished(len(rows))})",
                    "run `harness run` on its plan again to finish it, or drop --strict",
                )
            )
        raise UserError(problems)
    run, why = with_frozen_predictions(run_dir, run)
    out_dir = out_dir or run_dir
    _check_outputs(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = [torn.describe()] if torn else []
    if unfinished:
        notes.append(f"{unfinished}: every table, the plot and the macros say so")
    if why and run.comparison_run:
        notes.append(f"no predictions scored: {why}")
    elif why:
        notes.append(f"the plan's predictions are unknown ({why}): only negative controls scored")
    # every output written aside and swapped in together: an interrupt or a write error
    # leaves the previous report whole (harness.execution.atomic)
    with all_or_nothing(out_dir) as staging:
        frame = ledger_frame(rows, run)
        escapes = open_world_escapes(frame)  # scored once for the tables and the predictions
        predictions = (
            None
            if run.comparison_run
            else score_frame_predictions(frame, run.predictions, run.project_root, escapes)
        )
        tables = build_tables(rows, run, frame, predictions or [], escapes)
        tables_dir = staging.folder(out_dir / TABLES_DIR)
        names = _table_files(tables, tables_dir) + _headline_files(tables, tables_dir)
        table_paths = [out_dir / TABLES_DIR / n for n in names]
        if with_grader(frame).empty:
            notes.append(NO_GRADER_NOTE)

        figure: Path | None = out_dir / FOREST_PLOT
        recall = [r for r in closed_world_recall(frame) if r.scope is Scope.POOLED]
        if recall:
            from harness.analysis.plots import forest_plot  # matplotlib only when plotting

            title = "POST HOC: " if run.post_hoc or any(r.counts.post_hoc for r in recall) else ""
            title = f"{unfinished.upper()}: {title}" if unfinished else title
            forest_plot(
                recall, staging.file(figure), f"{title}closed-world recall, freeze {run.freeze_id}"
            )
        else:
            staging.remove(figure)  # an older report's plot would contradict this one
            figure = None
            notes.append("no closed-world pairs: no forest plot")

        macros = out_dir / MACROS
        _write(staging.file(macros), macros_text(tables, run, unfinished))

        payload, corpus, why = mutation_payload(run_dir, run, rows)
        if corpus is None:
            notes.append(f"{why}: {MUTATION_REPORT} has no mutant locations")
        mutation_json = out_dir / MUTATION_REPORT
        _write(
            staging.file(mutation_json),
            json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        )

        page = out_dir / REPORT_HTML
        headline = [t for t in tables if t.name in MAIN_TABLES]
        forest_png = staging.staged(figure).read_bytes() if figure else None
        sections = []
        if coverage:
            from harness.analysis.coverage_section import coverage_section, load_coverage

            sections.append(coverage_section(frame, load_coverage(coverage)))
        _write(
            staging.file(page),
            render_html(frame, headline, run, corpus, forest_png, predictions, sections),
        )
    return ReportResult(
        out_dir,
        tuple(table_paths),
        figure,
        macros,
        mutation_json,
        tuple(notes),
        page,
        tuple(predictions or ()),
    )

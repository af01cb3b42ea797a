"""The headline LaTeX preset (issue 29, item 6): it fits one column of a two-column paper
at \\footnotesize (pdflatex reports no overfull box, where the full table does), and every
number it prints is named by a macro of the full table."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness.analysis.frame import ledger_frame
from harness.analysis.headline import headline, headline_tables, render_headline_latex
from harness.analysis.render import render_latex
from harness.analysis.runs import load_run
from harness.analysis.scoring import closed_world_recall, open_world_escapes
from harness.analysis.tables import Kind, Table, build_tables, escape_table, recall_table

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "example_run"
# The widest published numbers: 1216 pairs, four-digit counts, every operator name.
EXHAUSTIVE = ROOT / "results" / "reference" / "closed_world_all" / "7799615fcfdb47c9"
OPEN = ROOT / "results" / "reference" / "open_world_all" / "e8e21ca6902c9d97"
PDFLATEX = shutil.which("pdflatex")


def _published() -> list[Table]:
    meta, rows = load_run(EXHAUSTIVE)
    recall = recall_table(closed_world_recall(ledger_frame(rows, meta)), meta)
    meta, rows = load_run(OPEN)
    escapes = escape_table(open_world_escapes(ledger_frame(rows, meta)), meta)
    return [recall, escapes]


def _overfull(tables: list[Table], folder: Path, render=render_headline_latex) -> list[str]:
    """Compile a two-column article holding the tables; the log's overfull-box lines."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for table in tables:
        (folder / f"{table.name}.tex").write_text(render(table), encoding="utf-8")
        names.append(table.name)
    body = "\n".join(f"\\input{{{name}}}" for name in names)
    (folder / "paper.tex").write_text(
        "\\documentclass[10pt,twocolumn]{article}\n\\usepackage{booktabs}\n"
        f"\\begin{{document}}\n{body}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(PDFLATEX), "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (folder / "paper.log").read_text(encoding="latin-1")
    assert done.returncode == 0, log[-2000:]
    return [line for line in log.splitlines() if line.startswith("Overfull \\hbox")]


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed (.ci/run installs it)")
def test_headline_tables_fit_one_column_where_the_full_ones_do_not(tmp_path) -> None:
    full = _published()
    assert _overfull(full[:1], tmp_path / "full", render_latex)  # 17 columns: it can fail
    meta, rows = load_run(FIXTURE)
    tables = headline_tables(full) + headline_tables(build_tables(rows, meta))
    assert [t.name for t in tables] == [
        "closed_world_recall_headline",
        "open_world_escapes_headline",
        "closed_world_recall_headline",
        "open_world_escapes_headline",
    ]
    for index, table in enumerate(tables):
        assert _overfull([table], tmp_path / f"headline{index}") == [], table.name


def test_every_headline_number_is_a_macro_of_its_full_table() -> None:
    meta, rows = load_run(FIXTURE)
    for table in build_tables(rows, meta):
        cut = headline(table)
        if cut is None:
            continue
        full = dict(table.macros())
        named = dict(cut.macros())
        assert named and set(named) <= set(full)
        assert all(full[name] == value for name, value in named.items())
        numbers = sum(
            (2 if c.kind is Kind.INTERVAL else 1)
            for row in cut.rows
            for c, cell in zip(cut.columns, row.cells, strict=True)
            if c.kind is not Kind.TEXT and cell is not None
        )
        assert numbers == len(named), cut.name  # no printed number without a macro

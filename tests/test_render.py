"""Any `Table` (the model every table-building function returns) renders through pandas:
`table_frame` is its typed data, CSV, Markdown and LaTeX come from DataFrames."""

from __future__ import annotations

import dataclasses
import io

import pandas as pd

from harness.analysis.render import (
    render_csv,
    render_latex,
    render_markdown,
    table_frame,
    text_frame,
)
from harness.analysis.table_model import Column, Kind, Row, Table

TABLE = Table(
    name="example",
    title="An example a_b & 100%",
    freeze="f00d",
    columns=(
        Column("name", "name", Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("rate", "rate", Kind.FLOAT, "Rate"),
        Column("rate 95% CI", "rate_ci", Kind.INTERVAL, "Rate"),
    ),
    rows=(
        Row(("a|b", 3, 0.5, (0.1, 0.9)), "A"),
        Row(("[x]", None, None, None), "B", post_hoc=True),
        Row(("all", 7, 1 / 3, (0.25, 0.75)), "All", section=1),
    ),
    macro_prefix="Example",
    notes=("a note with ~ and ≤",),
)


def test_table_frame_is_typed() -> None:
    frame = table_frame(TABLE)
    assert list(frame.columns) == [
        "freeze_id",
        "post_hoc",
        "name",
        "n",
        "rate",
        "rate_ci_lo",
        "rate_ci_hi",
    ]
    assert str(frame["n"].dtype) == "Int64" and str(frame["rate"].dtype) == "Float64"
    assert frame["n"].isna().tolist() == [False, True, False]
    assert frame["post_hoc"].tolist() == [False, True, False]
    assert frame.loc[2, "rate_ci_hi"] == 0.75


def test_csv_reads_back_as_the_frame() -> None:
    back = pd.read_csv(io.StringIO(render_csv(TABLE)), keep_default_na=False, dtype=str)
    assert back["name"].tolist() == ["a|b", "[x]", "all"]
    assert back["rate"].tolist() == ["0.500", "", "0.333"]
    assert render_csv(TABLE).splitlines()[3] == "f00d,false,all,7,0.333,0.250,0.750"
    assert render_csv(TABLE).splitlines()[2] == "f00d,true,[x],,,,"


def test_markdown_and_latex_from_the_text_frame() -> None:
    assert text_frame(TABLE, "—").iloc[1].tolist() == ["[x] (post hoc)", "—", "—", "—"]
    markdown = render_markdown(TABLE)
    assert markdown.startswith("### POST HOC: An example a_b & 100% (freeze f00d)\n\n| name")
    assert "a\\|b" in markdown and "- a note with ~ and ≤" in markdown
    latex = render_latex(TABLE).splitlines()
    body = latex[latex.index("\\midrule") + 1 : latex.index("\\bottomrule")]
    assert body == [
        "a|b & 3 & 0.500 & 0.100--0.900 \\\\",
        "{[x] (post hoc)} & --- & --- & --- \\\\",
        "\\midrule",  # a new section draws a rule
        "all & 7 & 0.333 & 0.250--0.750 \\\\",
    ]
    assert "\\toprule" in latex and latex[-1] == "\\end{table}"
    assert "\\caption{POST HOC: An example a\\_b \\& 100\\% (freeze f00d)}" in latex


def test_a_table_without_rows_renders_its_header() -> None:
    empty = dataclasses.replace(TABLE, rows=())
    markdown = render_markdown(empty)
    assert markdown.splitlines()[2].startswith("|") and len(markdown.splitlines()) >= 4
    assert render_csv(empty).count("\n") == 1

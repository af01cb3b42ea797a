"""The headline preset (issue 29, item 6): the few columns a reader of a paper needs, in a
table that fits one column of a two-column paper at \\footnotesize; the full tables stay
for an appendix.

A headline table is cut from its full table (same rows, same macro names: every number it
prints is named by a macro the full table already defines in macros.tex, so the text and
the table can never disagree). Recall: scope, operator, n, detected, recall, the 95% CI
with the design effect (other tools of this kind) and the evidence bounds (for a `draw:
all` arm, the census of its pool). Escapes: the family rows and `all`, with live pairs,
escapes, the rate and its 95% CI (deff). Written as `tables/headline/<name>_headline.tex`
(label `tab:<name>_headline`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from harness.analysis.table_model import Column, Kind, Table

HEADLINE_DIR = "headline"

# full table -> (column key, short header) in the order printed
_RECALL = (
    ("scope", "scope"),
    ("operator", "operator"),
    ("n", "n"),
    ("detected", "det."),
    ("recall", "recall"),
    ("recall_ci", "95% CI"),
    ("evidence", "bounds"),
)
_ESCAPE = (
    ("operator", "family"),
    ("live", "live"),
    ("escapes", "esc."),
    ("escape_rate", "rate"),
    ("escape_rate_ci_deff", "95% CI"),
)
PRESETS: dict[str, tuple[tuple[str, str], ...]] = {
    "closed_world_recall": _RECALL,
    "open_world_escapes": _ESCAPE,
}
NOTES = {
    "closed_world_recall": (
        "det. = detected of n pairs. 95% CI: Wilson with the design effect over tools (what "
        "other tools of this kind would show). bounds: [P/n, (P+U)/n], U undecided; for an "
        "exhaustive arm, the census of its pool. Full table in the appendix.",
    ),
    "open_world_escapes": (
        "Escapes = live pairs missed; rate = escapes / live. 95% CI: Wilson with the design "
        "effect over tools. Each generator apart; all pools them. Full table in the appendix.",
    ),
}


def headline(table: Table) -> Table | None:
    """The headline cut of `table`, or None when it has no preset."""
    preset = PRESETS.get(table.name)
    if preset is None:
        return None
    index = {c.key: i for i, c in enumerate(table.columns)}
    keep = [index[key] for key, _ in preset]
    columns = tuple(
        Column(header, c.key, c.kind, c.macro, c.width)
        for (key, header), c in zip(preset, (table.columns[i] for i in keep), strict=True)
    )
    rows = tuple(
        replace(row, cells=tuple(row.cells[i] for i in keep))
        for row in table.rows
        if table.name != "open_world_escapes" or _family_or_all(str(row.cells[0]))
    )
    if table.name == "open_world_escapes":
        rows = tuple(replace(r, cells=(_short(str(r.cells[0])), *r.cells[1:])) for r in rows)
    notes = NOTES[table.name] + tuple(n for n in table.notes if n.upper().startswith("UNFIN"))
    return replace(table, name=f"{table.name}_headline", columns=columns, rows=rows, notes=notes)


def _family_or_all(operator: str) -> bool:
    return operator.endswith("/*") or operator.startswith("all")


def _short(operator: str) -> str:
    """`all (POOLED GENERATORS: ...)` reads `all (pooled)` in the narrow column; the note
    says what it pools."""
    return "all (pooled)" if operator.startswith("all (") else operator


def headline_tables(tables: Sequence[Table]) -> list[Table]:
    return [h for t in tables if (h := headline(t)) is not None]


def render_headline_latex(table: Table) -> str:
    """A headline table as LaTeX (booktabs, `table` float, \\footnotesize): like
    `render_latex`, but a recall table's scope is a group heading instead of a column, and
    the outer column padding is dropped (`@{}`), which is what makes it fit one column."""
    from harness.analysis.render import (
        POST_HOC_MARK,
        cell_text,
        latex_escape,
        latex_float,
        number,
    )

    grouped = bool(table.columns) and table.columns[0].key == "scope"
    columns = table.columns[1:] if grouped else table.columns
    spec = "".join("l" if c.kind is Kind.TEXT else "r" for c in columns)
    body: list[str] = []
    scope = None
    for row in table.rows:
        cells = row.cells[1:] if grouped else row.cells
        if grouped and row.cells[0] != scope:
            scope = row.cells[0]
            if body:
                body.append("\\midrule")
            body.append(f"\\multicolumn{{{len(columns)}}}{{@{{}}l}}{{\\emph{{{scope}}}}} \\\\")
        texts = []
        for cell, column in zip(cells, columns, strict=True):
            if isinstance(cell, tuple):
                texts.append(f"{number(cell[0])}--{number(cell[1])}")
            else:
                texts.append(latex_escape(cell_text(cell, column, "---")))
        if table.mixed_post_hoc and row.post_hoc:
            texts[0] += latex_escape(POST_HOC_MARK)
        body.append(" & ".join(texts) + " \\\\")
    header = " & ".join(latex_escape(c.header) for c in columns) + " \\\\"
    tabular = [
        f"\\begin{{tabular}}{{@{{}}{spec}@{{}}}}",
        "\\toprule",
        header,
        "\\midrule",
        *body,
        "\\bottomrule",
        "\\end{tabular}}",
    ]
    return latex_float(
        table, tabular, "% Generated by harness report (headline preset); do not edit."
    )

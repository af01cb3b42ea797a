"""Tables as Markdown, LaTeX (booktabs), CSV and rich, each rendered from a pandas DataFrame
of the table (`table_frame` for CSV: typed numbers; `text_frame` for Markdown and LaTeX: the
cells as shown). pandas and tabulate lay the rows out (`to_csv`, `to_markdown`,
`Styler.to_latex`); what stays here is what they do not know: our headings and notes, the
escaping of Unicode for pdflatex, stacked headers, the section rules, the post-hoc marks.
Deterministic: the same table gives the same bytes (fixed 3-decimal numbers, no dates,
`\\n` line ends)."""

from __future__ import annotations

import textwrap
import unicodedata

import pandas as pd
from rich.table import Table as RichTable
from rich.text import Text

from harness.analysis.tables import Cell, Column, Kind, Table

DECIMALS = 3
POST_HOC_MARK = " (post hoc)"


def number(value: float) -> str:
    return f"{value:.{DECIMALS}f}"


def cell_text(cell: Cell, column: Column, missing: str) -> str:
    if cell is None:
        return missing
    if column.kind is Kind.INTERVAL:
        assert isinstance(cell, tuple)
        return f"[{number(cell[0])}, {number(cell[1])}]"
    if column.kind is Kind.FLOAT:
        assert isinstance(cell, int | float)
        return number(cell)
    return str(cell)


def _row_texts(table: Table, missing: str, range_dash: str | None = None) -> list[list[str]]:
    """Cells as text; with `range_dash`, intervals read `lo<dash>hi` instead of `[lo, hi]`."""
    out = []
    for row in table.rows:
        texts = []
        for cell, column in zip(row.cells, table.columns, strict=True):
            if range_dash and isinstance(cell, tuple):
                texts.append(f"{number(cell[0])}{range_dash}{number(cell[1])}")
            else:
                texts.append(cell_text(cell, column, missing))
        if table.mixed_post_hoc and row.post_hoc:
            texts[0] += POST_HOC_MARK
        out.append(texts)
    return out


def _numeric(column: Column) -> bool:
    return column.kind is not Kind.TEXT


# --- Markdown -----------------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def text_frame(table: Table, missing: str, range_dash: str | None = None) -> pd.DataFrame:
    """The table's cells as text, one column per table column (headers as labels)."""
    return pd.DataFrame(
        _row_texts(table, missing, range_dash),
        columns=[c.header for c in table.columns],
        dtype="string",
    )


def render_markdown(table: Table) -> str:
    frame = text_frame(table, "—").map(_md)
    frame.columns = [_md(c.header) for c in table.columns]
    body = frame.to_markdown(
        index=False,
        tablefmt="pipe",
        colalign=["right" if _numeric(c) else "left" for c in table.columns],
        disable_numparse=True,  # the cells are already text: "0.500" must not become 0.5
    )
    lines = [f"### {_md(table.heading)}", "", body]
    if table.notes:
        lines.append("")
        lines += [f"- {_md(note)}" for note in table.notes]
    return "\n".join(lines) + "\n"


# --- LaTeX --------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "$": r"\$",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}
# Non-ASCII text pdflatex's default input encoding may not know; others fall back to ASCII.
_LATEX_UNICODE = {
    "—": "---",
    "–": "--",
    "≠": r"$\neq$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "→": r"$\rightarrow$",
    "…": r"\ldots{}",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
}


def latex_escape(text: str) -> str:
    out = []
    for ch in text:
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in _LATEX_UNICODE:
            out.append(_LATEX_UNICODE[ch])
        elif ord(ch) < 128:
            out.append(ch if ch.isprintable() else " ")
        else:
            ascii_text = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(latex_escape(ascii_text) if ascii_text else "?")
    return "".join(out)


def _latex_cell(text: str) -> str:
    escaped = latex_escape(text)
    # A cell starting with `[` right after `\\` would be read as `\\[<length>]`.
    return "{" + escaped + "}" if escaped.startswith("[") else escaped


HEADER_LINE = 10  # characters per line of a stacked LaTeX column header


def _latex_header(column: Column) -> str:
    lines = textwrap.wrap(column.header, HEADER_LINE, break_long_words=False) or [""]
    if len(lines) == 1:
        return latex_escape(column.header)
    align = "r" if _numeric(column) else "l"
    body = "\\\\".join(latex_escape(line) for line in lines)
    return f"\\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}{body}\\end{{tabular}}"


def _spec(column: Column) -> str:
    if column.width:
        return f"p{{{column.width}}}"
    return "r" if _numeric(column) else "l"


TABLE_BOX = "HarnessTableBox"


def render_latex(table: Table) -> str:
    """A `table` float with a booktabs `tabular`; needs `\\usepackage{booktabs}`.
    Intervals read `lo--hi`; long headers are stacked. The tabular is wrapped in
    `\\HarnessTableBox{...}` (by default: as is); a paper whose tables are too wide may
    define it first, e.g. `\\newcommand{\\HarnessTableBox}[1]{\\resizebox{\\linewidth}{!}{#1}}`."""
    cells = text_frame(table, "---", "--").map(lambda t: _latex_cell(t) if t != "---" else t)
    cells.columns = [_latex_header(c) for c in table.columns]
    tabular = (
        cells.style.hide(axis="index")
        .to_latex(column_format="".join(_spec(c) for c in table.columns), hrules=True)
        .splitlines()
    )
    # Styler has no rule between row groups: a \midrule goes before each new section.
    body_start = tabular.index("\\midrule") + 1
    for index in range(len(table.rows) - 1, 0, -1):
        if table.rows[index].section != table.rows[index - 1].section:
            tabular.insert(body_start + index, "\\midrule")
    tabular[-1] += "}"  # closes \HarnessTableBox{
    lines = [
        "% Generated by harness report; do not edit.",
        f"\\providecommand{{\\{TABLE_BOX}}}[1]{{#1}}",
        "\\begin{table}[htbp]",
        "\\centering",
        "\\footnotesize",
        "\\setlength{\\tabcolsep}{3pt}",
        f"\\caption{{{latex_escape(table.heading)}}}",
        f"\\label{{tab:{table.name}}}",
        f"\\{TABLE_BOX}{{%",
        *tabular,
    ]
    if table.notes:
        lines += ["\\par\\smallskip", "{\\raggedright"]
        lines += [latex_escape(note) + "\\par" for note in table.notes]
        lines.append("}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


# --- CSV ----------------------------------------------------------------------------------


def table_frame(table: Table) -> pd.DataFrame:
    """The table as typed data: `freeze_id`, `post_hoc`, then one column per column key
    (an interval gives `<key>_lo` and `<key>_hi`); ints as Int64, numbers as float64, text
    as string, a missing cell as <NA>."""
    data: dict[str, object] = {
        "freeze_id": pd.array([table.freeze] * len(table.rows), dtype="string"),
        "post_hoc": [row.post_hoc or table.run_post_hoc for row in table.rows],
    }
    for i, column in enumerate(table.columns):
        cells = [row.cells[i] for row in table.rows]
        if column.kind is Kind.INTERVAL:
            for end, suffix in ((0, "lo"), (1, "hi")):
                ends = [c[end] if isinstance(c, tuple) else None for c in cells]
                data[f"{column.key}_{suffix}"] = pd.array(ends, dtype="Float64")
        elif column.kind is Kind.FLOAT:
            data[column.key] = pd.array(cells, dtype="Float64")
        elif column.kind is Kind.INT:
            data[column.key] = pd.array(cells, dtype="Int64")
        else:
            data[column.key] = pd.array([None if c is None else str(c) for c in cells], "string")
    return pd.DataFrame(data)


def render_csv(table: Table) -> str:
    """One line per row; every row carries the freeze and whether it is post hoc."""
    frame = table_frame(table)
    frame["post_hoc"] = frame["post_hoc"].map({True: "true", False: "false"})
    return frame.to_csv(index=False, lineterminator="\n", float_format=f"%.{DECIMALS}f")


# --- rich ---------------------------------------------------------------------------------


def to_rich(table: Table) -> RichTable:
    # Text(), not str: a witness or an interval must never be read as rich markup.
    out = RichTable(title=Text(table.heading), caption=Text(" ".join(table.notes)))
    for column in table.columns:
        out.add_column(
            column.header,
            justify="right" if _numeric(column) else "left",
            overflow="fold",
        )
    rows = list(zip(table.rows, _row_texts(table, "—"), strict=True))
    for index, (row, texts) in enumerate(rows):
        last_of_section = index + 1 < len(rows) and rows[index + 1][0].section != row.section
        out.add_row(*(Text(t) for t in texts), end_section=last_of_section)
    return out

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
from collections.abc import Sequence

import pandas as pd
from rich.table import Table as RichTable
from rich.text import Text

from harness.analysis.table_model import Cell, Column, Kind, Table

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
    mixed = table.mixed_post_hoc  # once: it reads every row
    for row in table.rows:
        texts = []
        for cell, column in zip(row.cells, table.columns, strict=True):
            if range_dash and isinstance(cell, tuple):
                texts.append(f"{number(cell[0])}{range_dash}{number(cell[1])}")
            else:
                texts.append(cell_text(cell, column, missing))
        if mixed and row.post_hoc:
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
    # tabulate counts columns from the rows: with none, column alignments cannot be given
    aligns = [("right" if _numeric(c) else "left") for c in table.columns] if len(frame) else None
    body = frame.to_markdown(
        index=False,
        tablefmt="pipe",
        colalign=aligns,
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
    return latex_float(table, tabular, "% Generated by harness report; do not edit.")


def latex_float(table: Table, tabular: Sequence[str], comment: str) -> str:
    """A table float at \\footnotesize around `tabular` (already boxed in the table box
    macro): caption, label, then the notes as a caption-width paragraph."""
    lines = [
        comment,
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


# a rich table with a box and one space of padding each side: 3 characters per column + 1
_RICH_FRAME = 3


def _widths(column: Column, texts: list[str]) -> tuple[int, int]:
    """(natural, least) width of a column. Least: its longest header word, and for a
    number or an interval its longest cell (never split); a text cell may fold to 16."""
    header = max((len(word) for word in column.header.split()), default=1)
    cells = max((len(t) for t in texts), default=1)
    least = max(header, cells if _numeric(column) else min(cells, 16))
    return max(len(column.header), cells, least), least


def fitted_widths(table: Table, width: int | None) -> dict[int, int | None]:
    """Column index -> width for a terminal `width` characters wide: natural widths when
    they fit; else the widest columns give way down to their least; then the rightmost
    columns are left out (the row label, the first, never)."""
    if width is None:
        return {i: None for i in range(len(table.columns))}
    texts = _row_texts(table, "—")
    sizes = [_widths(c, [row[i] for row in texts]) for i, c in enumerate(table.columns)]
    keep = list(range(len(table.columns)))
    while len(keep) > 1 and sum(sizes[i][1] + _RICH_FRAME for i in keep) + 1 > width:
        keep.pop()
    room = width - 1 - _RICH_FRAME * len(keep)
    widths = {i: sizes[i][0] for i in keep}
    while sum(widths.values()) > room:
        widest = max(keep, key=lambda i: (widths[i] - sizes[i][1], -i))
        if widths[widest] <= sizes[widest][1]:
            break  # only the one kept column, wider than the terminal: rich folds it
        widths[widest] -= 1
    return dict(widths)


def to_rich(table: Table, width: int | None = None) -> RichTable:
    """The table for a terminal `width` characters wide (None: any): columns that do not
    fit are left out, and the caption names them."""
    widths = fitted_widths(table, width)
    notes = list(table.notes)
    if len(widths) < len(table.columns):
        left = ", ".join(c.header for i, c in enumerate(table.columns) if i not in widths)
        notes.insert(0, f"Columns left out to fit {width} characters: {left} (see harness report).")
    # Text(), not str: a witness or an interval must never be read as rich markup.
    out = RichTable(title=Text(table.heading), caption=Text(" ".join(notes)))
    for i, size in widths.items():
        column = table.columns[i]
        out.add_column(
            column.header,
            justify="right" if _numeric(column) else "left",
            overflow="fold",
            width=size,  # at least the longest number: a number is never split
        )
    rows = list(zip(table.rows, _row_texts(table, "—"), strict=True))
    for index, (row, cells) in enumerate(rows):
        last_of_section = index + 1 < len(rows) and rows[index + 1][0].section != row.section
        out.add_row(*(Text(cells[i]) for i in widths), end_section=last_of_section)
    return out

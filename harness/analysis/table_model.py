"""The report's tables as data: columns, rows of typed cells, notes, and the LaTeX macro of
each number. Every table module builds `Table`s; `render` turns them into text."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from harness.analysis.macros import macro_word
from harness.analysis.scoring import ALL, Scope
from harness.analysis.statistics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

Interval = tuple[float, float]
Cell = int | float | str | Interval | None


class Kind(StrEnum):
    TEXT = "text"
    INT = "int"
    FLOAT = "float"
    INTERVAL = "interval"


@dataclass(frozen=True)
class Column:
    header: str
    key: str  # CSV header; an interval column gives `<key>_lo` and `<key>_hi`
    kind: Kind
    macro: str | None = None  # statistic part of the macro name; None: no macro
    width: str | None = None  # LaTeX p{} width for long text


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    macro_key: str | None = None  # row part of the macro name; None: no macros
    post_hoc: bool = False
    section: int = 0  # a change of section draws a rule


@dataclass(frozen=True)
class Table:
    name: str  # file stem
    title: str
    freeze: str  # the freeze id(s) the numbers come from
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    macro_prefix: str = ""
    notes: tuple[str, ...] = ()
    extra_macros: tuple[tuple[str, int | float], ...] = ()
    run_post_hoc: bool = False
    unfinished: str | None = None  # "unfinished: N of M pairs" for a run that has not ended

    @property
    def post_hoc(self) -> bool:
        return self.run_post_hoc or any(row.post_hoc for row in self.rows)

    @property
    def mixed_post_hoc(self) -> bool:
        """Some rows post hoc and some not: the post-hoc rows are marked one by one."""
        return len({row.post_hoc for row in self.rows}) > 1

    @property
    def heading(self) -> str:
        label = "POST HOC: " if self.post_hoc else ""
        if self.unfinished:
            label = f"{self.unfinished.upper()}: {label}"
        return f"{label}{self.title} (freeze {self.freeze})"

    def macros(self) -> list[tuple[str, int | float]]:
        """(name, number) for every number in a row with a macro key, then the extras."""
        out: list[tuple[str, int | float]] = []
        for row in self.rows:
            if row.macro_key is None:
                continue
            for column, cell in zip(self.columns, row.cells, strict=True):
                if column.macro is None or cell is None:
                    continue
                stem = f"{self.macro_prefix}{row.macro_key}{column.macro}"
                if column.kind is Kind.INTERVAL:
                    assert isinstance(cell, tuple)
                    out += [(f"{stem}LB", cell[0]), (f"{stem}UB", cell[1])]
                elif column.kind in (Kind.INT, Kind.FLOAT):
                    assert isinstance(cell, int | float)
                    out.append((stem, cell))
        return out + [(f"{self.macro_prefix}{name}", value) for name, value in self.extra_macros]


N_NOTE = "n = pairs drawn less infra_error (harness failures, shown apart and outside n)."
DEFF_NOTE = (
    "95% CI (deff): Wilson interval of x/n with n_eff = n/deff, Kish design effect "
    "deff = 1 + (m-1) ICC, ICC by one-way ANOVA over clusters = tools."
)

BOOTSTRAP_NOTE = (
    "Sensitivity: cluster bootstrap = 95% percentile interval of recall over "
    f"{BOOTSTRAP_RESAMPLES} resamples of whole tools with replacement (scipy.stats.bootstrap, "
    f"seed {BOOTSTRAP_SEED}); it drops the common-ICC assumption of the deff interval, "
    "which stays the headline. — where the row has fewer than two tools."
)


SCOPE_WORD = {Scope.POOLED: "", Scope.TOY: "Toy", Scope.REAL: "Real"}


def op_word(operator: str) -> str:
    return "All" if operator == ALL else macro_word(operator)

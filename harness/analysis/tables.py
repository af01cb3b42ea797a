"""The report's tables as data: columns, rows of typed cells, notes, and the LaTeX macro of
each number. Built from ledger rows by pure functions; `render` turns them into text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from harness.analysis.macros import macro_word
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    ALL,
    EscapeRow,
    GraderRow,
    GraderToolRow,
    MissCauseRow,
    NegativeControlRow,
    PrecisionRow,
    RecallRow,
    Scope,
    ToolRow,
    closed_world_recall,
    control_precision,
    escape_causes,
    grader_arm,
    grader_tasks_by_tool,
    negative_controls,
    observation_axis_recall,
    open_world_escapes,
    per_tool,
)
from harness.analysis.statistics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from harness.execution.ledger import LedgerRow

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


# --- closed world -------------------------------------------------------------------------

_SCOPE_WORD = {Scope.POOLED: "", Scope.TOY: "Toy", Scope.REAL: "Real"}


def _op_word(operator: str) -> str:
    return "All" if operator == ALL else macro_word(operator)


def recall_table(recall: Sequence[RecallRow], meta: RunMeta) -> Table:
    return _recall_rows_table(
        recall,
        meta,
        "closed_world_recall",
        "Closed-world recall per operator",
        "operator",
        "Recall",
    )


def axis_table(recall: Sequence[RecallRow], meta: RunMeta) -> Table:
    """Recall on the observation-clause operators, one row per axis (validity, integrity)."""
    table = _recall_rows_table(
        recall,
        meta,
        "closed_world_axes",
        "Closed-world recall per observation axis",
        "axis",
        "AxisRecall",
    )
    note = (
        "axis = the defect class the operator instantiates: validity_break (an artifact used "
        "outside its window on the environment's clock) or integrity_break (altered bytes "
        "accepted); class-matched counts detections of that class."
    )
    return replace(table, notes=(*table.notes[:1], note, *table.notes[1:]))


def _recall_rows_table(
    recall: Sequence[RecallRow],
    meta: RunMeta,
    name: str,
    title: str,
    label: str,
    macro_prefix: str,
) -> Table:
    columns = (
        Column("scope", "scope", Kind.TEXT),
        Column(label, label, Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("n_eff", "n_eff", Kind.FLOAT, "Neff"),
        Column("detected", "detected", Kind.INT, "Detected"),
        Column("missed", "missed", Kind.INT, "Missed"),
        Column("untestable", "untestable", Kind.INT, "Untestable"),
        Column("error", "error", Kind.INT, "Error"),
        Column("infra", "infra_error", Kind.INT, "Infra"),
        Column("recall", "recall", Kind.FLOAT, ""),
        Column("recall 95% CI (deff)", "recall_ci", Kind.INTERVAL, ""),
        Column(
            "sensitivity: recall 95% CI (cluster bootstrap)",
            "recall_ci_bootstrap",
            Kind.INTERVAL,
            "Bootstrap",
        ),
        Column("evidence bounds", "evidence", Kind.INTERVAL, "Evidence"),
        Column("class-matched recall", "class_matched_recall", Kind.FLOAT, "ClassMatched"),
        Column("class-matched 95% CI (deff)", "class_matched_ci", Kind.INTERVAL, "ClassMatched"),
    )
    rows = []
    for r in recall:
        c = r.counts
        rows.append(
            Row(
                (
                    r.scope.value,
                    r.operator,
                    c.n,
                    r.recall.clustered.n_eff,
                    c.detected,
                    c.missed,
                    c.untestable,
                    c.error,
                    c.infra,
                    r.recall.value,
                    (r.recall.clustered.lo, r.recall.clustered.hi),
                    r.recall.bootstrap,
                    c.evidence,
                    r.class_matched.value,
                    (r.class_matched.clustered.lo, r.class_matched.clustered.hi),
                ),
                _SCOPE_WORD[r.scope] + _op_word(r.operator),
                c.post_hoc,
                list(Scope).index(r.scope),
            )
        )
    return Table(
        name,
        title,
        meta.freeze_id,
        columns,
        tuple(rows),
        macro_prefix,
        (
            N_NOTE,
            "error = timeout + crash + compile_error; recall = detected / n (any class); "
            "class-matched counts only detections of the operator's own defect class.",
            DEFF_NOTE,
            BOOTSTRAP_NOTE,
            "Evidence bounds [P/n, (P+U)/n]: P detected, U undecided (untestable + error).",
            "Scope toy = target toy_domain, real = every other target, pooled = both.",
        ),
        run_post_hoc=meta.post_hoc,
    )


# --- controls -----------------------------------------------------------------------------


def _precision_key(arm: str, operator: str) -> str:
    if arm == ALL:
        return "All"
    return macro_word(arm) + ("" if operator == ALL else macro_word(operator))


def precision_table(precision: Sequence[PrecisionRow], meta: RunMeta) -> Table:
    columns = (
        Column("arm", "arm", Kind.TEXT),
        Column("control", "control", Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("not flagged (TP)", "not_flagged", Kind.INT, "NotFlagged"),
        Column("flagged (FP)", "flagged", Kind.INT, "Flagged"),
        Column("undecided", "undecided", Kind.INT, "Undecided"),
        Column("infra", "infra_error", Kind.INT, "Infra"),
        Column("precision", "precision", Kind.FLOAT, ""),
        Column("precision 95% CI", "precision_ci", Kind.INTERVAL, ""),
        Column("FP rate", "false_positive_rate", Kind.FLOAT, "FPRate"),
        Column("FP rate 95% CI", "false_positive_rate_ci", Kind.INTERVAL, "FPRate"),
    )
    sections = {"controls": 0, "negative_controls": 1, ALL: 2}
    rows = tuple(
        Row(
            (
                r.arm,
                r.operator,
                r.counts.n,
                r.precision.x,
                r.false_positive.x,
                r.counts.undecided,
                r.counts.infra,
                r.precision.value,
                r.precision.plain,
                r.false_positive.value,
                r.false_positive.plain,
            ),
            _precision_key(r.arm, r.operator),
            r.counts.post_hoc,
            sections.get(r.arm, 3),
        )
        for r in precision
    )
    return Table(
        "control_precision",
        "Precision on controls: a flagged control is a false positive",
        meta.freeze_id,
        columns,
        rows,
        "Precision",
        (
            N_NOTE,
            "precision = not flagged / n; FP rate = flagged / n; both with the plain "
            "Wilson 95% interval. undecided controls (untestable, timeout, crash, "
            "compile_error) count as not flagged.",
        ),
        run_post_hoc=meta.post_hoc,
    )


def negative_control_table(controls: Sequence[NegativeControlRow], meta: RunMeta) -> Table:
    columns = (
        Column("control", "control", Kind.TEXT),
        Column("tool", "tool", Kind.TEXT),
        Column("predicted", "predicted", Kind.TEXT),
        Column("observed", "observed", Kind.TEXT),
        Column("status", "status", Kind.TEXT),
        Column("outcome", "outcome", Kind.TEXT),
        Column("why the prediction failed", "detail", Kind.TEXT, width="6cm"),
    )
    rows = tuple(
        Row(
            (
                r.control,
                r.tool,
                r.predicted.value if r.predicted else None,
                r.observed.value if r.observed else None,
                r.status.value,
                "hit" if r.hit else "miss",
                r.detail or None,
            ),
            post_hoc=r.post_hoc,
        )
        for r in controls
    )
    hits = sum(1 for r in controls if r.hit)
    return Table(
        "negative_controls",
        "Negative controls: predicted and observed tool verdicts",
        meta.freeze_id,
        columns,
        rows,
        "NegativeControl",
        (
            "predicted = the verdict written in the plan before the first run; observed = "
            "the checker's tool verdict with the control applied; hit = the two agree.",
        ),
        extra_macros=(("N", len(controls)), ("Hits", hits), ("Misses", len(controls) - hits)),
        run_post_hoc=meta.post_hoc,
    )


# --- open world ---------------------------------------------------------------------------


def _escape_key(operator: str) -> str:
    if operator.endswith("/*"):
        return macro_word(operator[:-2]) + "Family"
    return _op_word(operator)


def escape_table(escapes: Sequence[EscapeRow], meta: RunMeta) -> Table:
    columns = (
        Column("operator", "operator", Kind.TEXT),
        Column("mutants", "mutants", Kind.INT, "Mutants"),
        Column("pairs", "pairs", Kind.INT, "Pairs"),
        Column("infra", "infra_error", Kind.INT, "Infra"),
        Column("live", "live", Kind.INT, "Live"),
        Column("escapes", "escapes", Kind.INT, "Escapes"),
        Column("escape rate", "escape_rate", Kind.FLOAT, ""),
        Column("95% CI (Wilson)", "escape_rate_ci", Kind.INTERVAL, "Plain"),
        Column("95% CI (deff)", "escape_rate_ci_deff", Kind.INTERVAL, ""),
        Column("n_eff", "n_eff", Kind.FLOAT, "Neff"),
    )
    rows = tuple(
        Row(
            (
                r.operator,
                r.counts.mutants,
                r.counts.n,
                r.counts.infra,
                r.escape.n,
                r.escape.x,
                r.escape.value,
                r.escape.plain,
                (r.escape.clustered.lo, r.escape.clustered.hi),
                r.escape.clustered.n_eff,
            ),
            _escape_key(r.operator),
            r.counts.post_hoc,
            2 if r.operator == ALL else int(r.operator.endswith("/*")),
        )
        for r in escapes
    )
    return Table(
        "open_world_escapes",
        "Open-world escapes per operator",
        meta.freeze_id,
        columns,
        rows,
        "Escape",
        (
            "pairs = pairs drawn less infra_error; live = the mutant differs from the "
            "original on the independent probe corpus; escape = live and missed.",
            "escape rate = escapes / live pairs. " + DEFF_NOTE,
            "<family>/* rows pool the family's operators; all pools every operator.",
        ),
        run_post_hoc=meta.post_hoc,
    )


def cause_table(causes: Sequence[MissCauseRow], meta: RunMeta, post_hoc: bool) -> Table:
    columns = (
        Column("miss cause", "miss_cause", Kind.TEXT),
        Column("escapes", "escapes", Kind.INT, "Escapes"),
        Column("share of escapes", "share_of_escapes", Kind.FLOAT, "Share"),
        Column("all misses", "misses", Kind.INT, "Misses"),
    )
    rows = tuple(
        Row((r.cause, r.escapes, r.share_of_escapes, r.misses), macro_word(r.cause), post_hoc)
        for r in causes
    )
    return Table(
        "open_world_miss_causes",
        "Open-world escapes by miss cause",
        meta.freeze_id,
        columns,
        rows,
        "EscapeCause",
        (
            "all misses includes those not live (unreached: equivalent or not reached by "
            "any probe), which are not escapes.",
        ),
        run_post_hoc=meta.post_hoc,
    )


# --- grader arm ---------------------------------------------------------------------------

GRADER_NOTE = (
    "grader = the target's own grader (AgentDojo's utility checks), replayed on the ground "
    "truth of every user task that calls the pair's tool; caught = some task's utility "
    "verdict changed under the mutant."
)


def _grader_key(arm: str, operator: str) -> str:
    if arm == ALL:
        return "All"
    return macro_word(arm) + "All" if operator == ALL else macro_word(operator)


def grader_table(grader: Sequence[GraderRow], meta: RunMeta) -> Table:
    columns = (
        Column("arm", "arm", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("checker detected", "checker_detected", Kind.INT, "CheckerDetected"),
        Column("checker recall", "checker_recall", Kind.FLOAT, "Checker"),
        Column("checker 95% CI (deff)", "checker_recall_ci", Kind.INTERVAL, "Checker"),
        Column("grader caught", "grader_caught", Kind.INT, "Caught"),
        Column("grader recall", "grader_recall", Kind.FLOAT, ""),
        Column("grader 95% CI (deff)", "grader_recall_ci", Kind.INTERVAL, ""),
        Column("both", "both", Kind.INT, "Both"),
        Column("checker only", "checker_only", Kind.INT, "CheckerOnly"),
        Column("grader only", "grader_only", Kind.INT, "GraderOnly"),
        Column("neither", "neither", Kind.INT, "Neither"),
    )
    sections = {"closed_world": 0, "open_world": 1, ALL: 2}
    rows = tuple(
        Row(
            (
                r.arm,
                r.operator,
                r.n,
                r.checker.x,
                r.checker.value,
                (r.checker.clustered.lo, r.checker.clustered.hi),
                r.grader.x,
                r.grader.value,
                (r.grader.clustered.lo, r.grader.clustered.hi),
                r.both,
                r.checker_only,
                r.grader_only,
                r.neither,
            ),
            _grader_key(r.arm, r.operator),
            r.post_hoc,
            sections.get(r.arm, 3),
        )
        for r in grader
    )
    return Table(
        "grader_arm",
        "Grader arm: checker recall beside the target's own grader on the same mutants",
        meta.freeze_id,
        columns,
        rows,
        "GraderRecall",
        (
            "n = closed- and open-world pairs with a grader verdict (targets with a grader), "
            "less infra_error; pairs that never reached the replay (compile_error, timeout, "
            "crash) have none and are not counted.",
            GRADER_NOTE,
            "checker recall = detected / n; grader recall = caught / n; both, checker only, "
            "grader only and neither split n (an untestable pair is not detected).",
            DEFF_NOTE,
            "all = the arm's operators pooled; all / all pools both arms.",
        ),
        run_post_hoc=meta.post_hoc,
    )


TASKS_TEXT_CHARS = 60  # a longer task list is cut, and the rest counted


def task_list_text(tasks: Sequence[str], limit: int = TASKS_TEXT_CHARS) -> str | None:
    """`a, b, c` or, past `limit` characters, `a, b, … (+3 more)`; None when empty."""
    if not tasks:
        return None
    shown = [tasks[0]]  # at least one, however long
    for task in tasks[1:]:
        if len(", ".join([*shown, task])) > limit:
            break
        shown.append(task)
    rest = len(tasks) - len(shown)
    return ", ".join(shown) + (f", … (+{rest} more)" if rest else "")


def grader_tasks_table(tools: Sequence[GraderToolRow], meta: RunMeta) -> Table:
    columns = (
        Column("target", "target", Kind.TEXT),
        Column("tool", "tool", Kind.TEXT),
        Column("pairs", "pairs", Kind.INT, "Pairs"),
        Column("grader caught", "grader_caught", Kind.INT, "Caught"),
        Column("tasks", "tasks", Kind.INT, "Tasks"),
        Column("changed tasks", "task_ids", Kind.TEXT, width="6cm"),
    )
    targets = sorted({r.target for r in tools})
    rows = tuple(
        Row(
            (r.target, r.tool, r.pairs, r.caught, len(r.tasks), task_list_text(r.tasks)),
            macro_word(r.target) + macro_word(r.tool),
            r.post_hoc,
            targets.index(r.target),
        )
        for r in tools
    )
    return Table(
        "grader_tasks_by_tool",
        "Tasks whose utility verdict a mutant of the tool changed",
        meta.freeze_id,
        columns,
        rows,
        "GraderTasks",
        (
            "pairs = closed- and open-world pairs of the tool with a grader verdict, less "
            "infra_error; grader caught = those whose mutant changed some task's verdict.",
            GRADER_NOTE,
            "tasks = the union of the changed tasks over the tool's pairs, as observed: the "
            "benchmark scores a defective tool corrupted. A list longer than "
            f"{TASKS_TEXT_CHARS} characters is cut, with the count of the rest.",
        ),
        run_post_hoc=meta.post_hoc,
    )


# --- per tool -----------------------------------------------------------------------------


def tool_table(tools: Sequence[ToolRow], meta: RunMeta) -> Table:
    columns = (
        Column("arm", "arm", Kind.TEXT),
        Column("target", "target", Kind.TEXT),
        Column("tool", "tool", Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("detected", "detected", Kind.INT, "Detected"),
        Column("missed", "missed", Kind.INT, "Missed"),
        Column("undecided", "undecided", Kind.INT, "Undecided"),
        Column("infra", "infra_error", Kind.INT, "Infra"),
        Column("live", "live", Kind.INT, "Live"),
        Column("escapes", "escapes", Kind.INT, "Escapes"),
        Column("detection rate", "detection_rate", Kind.FLOAT, "Rate"),
    )
    arms = sorted({r.arm for r in tools})
    rows = tuple(
        Row(
            (
                r.arm,
                r.target,
                r.tool,
                r.counts.n,
                r.counts.detected,
                r.counts.missed,
                r.counts.undecided,
                r.counts.infra,
                r.counts.live,
                r.counts.escapes,
                r.detection.value,
            ),
            macro_word(r.arm) + macro_word(r.target) + macro_word(r.tool),
            r.counts.post_hoc,
            arms.index(r.arm),
        )
        for r in tools
    )
    return Table(
        "per_tool",
        "Pairs per tool: the clusters of the design effect",
        meta.freeze_id,
        columns,
        rows,
        "Tool",
        (
            N_NOTE,
            "undecided = untestable + timeout + crash + compile_error; "
            "detection rate = detected / n (for controls: the false-positive rate).",
        ),
        run_post_hoc=meta.post_hoc,
    )


# --- all of them --------------------------------------------------------------------------


def build_tables(rows: Sequence[LedgerRow], meta: RunMeta) -> list[Table]:
    """Every table that has rows, in a fixed order."""
    tables = _tables(rows, meta)
    others = sorted({r.freeze_id for r in rows} - {meta.freeze_id})
    if others:  # rows that run.json does not account for: say so in every table
        note = f"rows also carry freeze ids {', '.join(others)} (run.json: {meta.freeze_id})."
        tables = [replace(t, notes=(*t.notes, note)) for t in tables]
    return tables


def _tables(rows: Sequence[LedgerRow], meta: RunMeta) -> list[Table]:
    tables = []
    if recall := closed_world_recall(rows):
        tables.append(recall_table(recall, meta))
    if axes := observation_axis_recall(rows):
        tables.append(axis_table(axes, meta))
    if precision := control_precision(rows):
        tables.append(precision_table(precision, meta))
    if controls := negative_controls(rows):
        tables.append(negative_control_table(controls, meta))
    if escapes := open_world_escapes(rows):
        tables.append(escape_table(escapes, meta))
        if causes := escape_causes(rows):
            tables.append(cause_table(causes, meta, escapes[-1].counts.post_hoc))
    if grader := grader_arm(rows):  # none for targets without a grader (the toy domain)
        tables.append(grader_table(grader, meta))
        tables.append(grader_tasks_table(grader_tasks_by_tool(rows), meta))
    if tools := per_tool(rows):
        tables.append(tool_table(tools, meta))
    return tables

"""The report's tables as data: columns, rows of typed cells, notes, and the LaTeX macro of
each number. Built by pure functions from the ledger frame (`ledger_frame`), whose counts
`scoring` computes; `render` turns them into text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from harness.analysis.frame import ledger_frame
from harness.analysis.macros import macro_word
from harness.analysis.predictions import (
    Outcome,
    PredictionKind,
    PredictionRow,
    score_frame_predictions,
)
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    ALL,
    UNKNOWN_CAUSE,
    CauseCountRow,
    EscapeRow,
    FlagPrecisionRow,
    GraderRow,
    GraderToolRow,
    MissCauseRow,
    NegativeControlRow,
    RecallRow,
    Scope,
    SpecificityRow,
    ToolRow,
    closed_world_miss_causes,
    closed_world_recall,
    control_specificity,
    escape_causes,
    flag_precision,
    grader_arm,
    grader_tasks_by_tool,
    negative_controls,
    observation_axis_recall,
    open_world_escapes,
    per_tool,
)
from harness.analysis.statistics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from harness.execution.ledger import LedgerRow, MissCause

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


# --- closed world -------------------------------------------------------------------------

_SCOPE_WORD = {Scope.POOLED: "", Scope.TOY: "Toy", Scope.REAL: "Real"}


def _op_word(operator: str) -> str:
    return "All" if operator == ALL else macro_word(operator)


NO_CANDIDATES = "no candidates"


def _empty_operators(meta: RunMeta, kind: str) -> list[tuple[str, str]]:
    """(operator, "arm: reason") for each operator of an arm of `kind` with nothing drawn."""
    return [
        (p.operator, f"{p.arm}: {p.empty_reason or 'nothing drawn'}")
        for p in meta.pools
        if p.kind == kind and p.drawn == 0
    ]


def recall_table(recall: Sequence[RecallRow], meta: RunMeta) -> Table:
    table = _recall_rows_table(
        recall,
        meta,
        "closed_world_recall",
        "Closed-world recall per operator",
        "operator",
        "Recall",
    )
    return with_empty_rows(table, meta, "closed_world")


def with_empty_rows(table: Table, meta: RunMeta, kind: str) -> Table:
    """An operator of the plan that drew nothing keeps its row: "no candidates", n = 0, and
    a note with its reason, never a missing row."""
    shown = {row.cells[1] for row in table.rows}
    empty = [(op, why) for op, why in _empty_operators(meta, kind) if op not in shown]
    if not empty:
        return table
    blank: tuple[Cell, ...] = (None,) * (len(table.columns) - 3)
    rows = [
        Row((Scope.POOLED.value, f"{op} ({NO_CANDIDATES})", 0, *blank), section=99)
        for op in dict.fromkeys(op for op, _ in empty)
    ]
    notes = [f"{op}: {NO_CANDIDATES} ({why})." for op, why in empty]
    return replace(table, rows=(*table.rows, *rows), notes=(*table.notes, *notes))


def pool_table(meta: RunMeta) -> Table:
    """Per arm and operator: the pool before and after each screen, and what was drawn."""
    from harness.mutation.screen import SCREENS

    columns = (
        Column("arm", "arm", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
        Column("offered", "offered", Kind.INT, "Offered"),
        *(Column(s.value, s.value, Kind.INT) for s in SCREENS),
        Column("kept", "kept", Kind.INT, "Kept"),
        Column("drawn", "drawn", Kind.INT, "Drawn"),
        Column("note", "note", Kind.TEXT, width="5cm"),
    )
    rows = tuple(
        Row(
            (
                p.arm,
                p.operator,
                p.offered,
                *(p.screened.get(s.value, 0) for s in SCREENS),
                p.kept,
                p.drawn,
                f"{NO_CANDIDATES}: {p.empty_reason}" if p.empty_reason else "",
            ),
            macro_word(p.arm) + macro_word(p.operator.replace("/", "-")),
        )
        for p in meta.pools
    )
    return Table(
        "pool_screening",
        f"Pool per operator before and after screening (rule {meta.screening_rule})",
        meta.freeze_id,
        columns,
        rows,
        "Pool",
        (
            "offered = candidate pairs enumerated; each screen column = pairs it removed "
            "(compile_error: does not compile; definition_error: fails where the function is "
            "defined; equivalent: bytecode-identical to the original; duplicate: same "
            "function as an earlier candidate of the site); kept = left to draw.",
        ),
        run_post_hoc=meta.post_hoc,
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
        Column("P/(P+F)", "counted_only", Kind.FLOAT, "CountedOnly"),
        Column("U/N", "unknown_share", Kind.FLOAT, "UnknownShare"),
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
                    c.counted_only,
                    c.unknown_share,
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
            "Evidence bounds [P/n, (P+U)/n]: P detected, U undecided (untestable + error); "
            "beside them the counted-only rate P/(P+F) (F missed) and the Unknown share U/n.",
            "Scope toy = target toy_domain, real = every other target, pooled = both.",
        ),
        run_post_hoc=meta.post_hoc,
    )


def closed_cause_table(causes: Sequence[CauseCountRow], meta: RunMeta) -> Table:
    names = [c.value for c in MissCause]
    if any(r.of(UNKNOWN_CAUSE) for r in causes):
        names.append(UNKNOWN_CAUSE)
    columns = (
        Column("scope", "scope", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
        Column("missed", "missed", Kind.INT, "Missed"),
        *(Column(name, name, Kind.INT, macro_word(name)) for name in names),
    )
    rows = tuple(
        Row(
            (r.scope.value, r.operator, r.misses, *(r.of(name) for name in names)),
            _SCOPE_WORD[r.scope] + _op_word(r.operator),
            r.post_hoc,
            list(Scope).index(r.scope),
        )
        for r in causes
    )
    return Table(
        "closed_world_miss_causes",
        "Closed-world misses by cause per operator",
        meta.freeze_id,
        columns,
        rows,
        "MissCause",
        (
            "missed = pairs the checker ran on and found nothing new in; each has one cause.",
            "no_clause: live, and no clause constrains what the mutant changed (no predicate "
            "reads the changed path in the post-state; no frame clause has it in its scope "
            "outside its writes); probe_unrevealing: live and constrained, but no checker "
            "probe revealed it; unreached: not live on the independent corpus; "
            "checker_crash: the checker failed on the mutant.",
            "Scope toy = target toy_domain, real = every other target, pooled = both.",
        ),
        run_post_hoc=meta.post_hoc,
    )


# --- controls -----------------------------------------------------------------------------


def _specificity_key(arm: str, operator: str) -> str:
    if arm == ALL:
        return "All"
    return macro_word(arm) + ("" if operator == ALL else macro_word(operator))


def specificity_table(specificity: Sequence[SpecificityRow], meta: RunMeta) -> Table:
    columns = (
        Column("arm", "arm", Kind.TEXT),
        Column("control", "control", Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("not flagged", "not_flagged", Kind.INT, "NotFlagged"),
        Column("flagged (FP)", "flagged", Kind.INT, "Flagged"),
        Column("undecided", "undecided", Kind.INT, "Undecided"),
        Column("infra", "infra_error", Kind.INT, "Infra"),
        Column("specificity", "specificity", Kind.FLOAT, ""),
        Column("specificity 95% CI", "specificity_ci", Kind.INTERVAL, ""),
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
                r.specificity.x,
                r.false_positive.x,
                r.counts.undecided,
                r.counts.infra,
                r.specificity.value,
                r.specificity.plain,
                r.false_positive.value,
                r.false_positive.plain,
            ),
            _specificity_key(r.arm, r.operator),
            r.counts.post_hoc,
            sections.get(r.arm, 3),
        )
        for r in specificity
    )
    return Table(
        "control_specificity",
        "Specificity on controls: a flagged control is a false positive",
        meta.freeze_id,
        columns,
        rows,
        "Specificity",
        (
            N_NOTE,
            "specificity = not flagged / n (the complement of the false-positive rate on "
            "controls); FP rate = flagged / n; both with the plain Wilson 95% interval. "
            "undecided controls (untestable, timeout, crash, compile_error) count as not "
            "flagged. Precision over flags is in flag_precision.",
        ),
        run_post_hoc=meta.post_hoc,
    )


def flag_precision_table(flags: Sequence[FlagPrecisionRow], meta: RunMeta) -> Table:
    columns = (
        Column("scope", "scope", Kind.TEXT),
        Column("flags", "flags", Kind.INT, "Flags"),
        Column("on mutants", "on_mutants", Kind.INT, "OnMutants"),
        Column("on controls", "on_controls", Kind.INT, "OnControls"),
        Column("on negative controls", "on_negative_controls", Kind.INT, "OnNegativeControls"),
        Column("correct", "correct", Kind.INT, "Correct"),
        Column("false", "false_flags", Kind.INT, "False"),
        Column("precision", "precision", Kind.FLOAT, ""),
        Column("95% CI (Wilson)", "precision_ci", Kind.INTERVAL, "Plain"),
        Column("95% CI (deff)", "precision_ci_deff", Kind.INTERVAL, ""),
    )
    rows = tuple(
        Row(
            (
                r.scope.value,
                r.flags,
                r.on_mutants,
                r.on_controls,
                r.on_negative_controls,
                r.precision.x,
                r.false_flags,
                r.precision.value,
                r.precision.plain,
                (r.precision.clustered.lo, r.precision.clustered.hi),
            ),
            _SCOPE_WORD[r.scope] + "All",
            r.post_hoc,
        )
        for r in flags
    )
    return Table(
        "flag_precision",
        "Flag precision: correct flags among every pair the checker flagged",
        meta.freeze_id,
        columns,
        rows,
        "FlagPrecision",
        (
            "flags = pairs detected (a new VIOLATES) over every arm: closed- and open-world "
            "mutants, controls and negative controls.",
            "correct = a flag on a mutant, or on a negative control predicted to VIOLATE; a "
            "flag on a control or on a negative control predicted to CONFORM is false.",
            "precision = correct / flags with the plain Wilson 95% interval and the one "
            "widened by the design effect over tools. " + DEFF_NOTE,
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
    "grader = the target's own grader, replayed with no model on the ground truth of every "
    "task that calls the pair's tool (AgentDojo: each user task's utility check; tau2-bench: "
    "the port's db_match and env_assertions per task, where db_match rebuilds its expected "
    "database with the same, mutated, tools, so it cannot change its verdict under a "
    "deterministic mutant); caught = some task's verdict changed under the mutant."
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


# --- predictions --------------------------------------------------------------------------

_PREDICTION_SECTION = {kind: index for index, kind in enumerate(PredictionKind)}


def predictions_table(predictions: Sequence[PredictionRow], meta: RunMeta, source: str) -> Table:
    """`source`: where the plan's predictions were read from (for the notes)."""
    columns = (
        Column("prediction", "prediction", Kind.TEXT),
        Column("scope", "scope", Kind.TEXT),
        Column("subject", "subject", Kind.TEXT),
        Column("predicted", "predicted", Kind.TEXT),
        Column("observed", "observed", Kind.TEXT),
        Column("n", "n", Kind.INT),
        Column("95% CI (deff)", "ci", Kind.INTERVAL),
        Column("outcome", "outcome", Kind.TEXT),
    )
    rows = tuple(
        Row(
            (
                p.kind.value,
                p.scope,
                p.subject,
                p.predicted,
                p.observed,
                p.n,
                p.interval,
                p.outcome.value,
            ),
            post_hoc=p.post_hoc,
            section=_PREDICTION_SECTION[p.kind],
        )
        for p in predictions
    )
    tally = {o: sum(1 for p in predictions if p.outcome is o) for o in Outcome}
    return Table(
        "predictions",
        "Predictions of the plan, scored",
        meta.freeze_id,
        columns,
        rows,
        "Predictions",
        (
            f"plan predictions: {source}; negative-control verdicts: the ledger rows.",
            "95% CI (deff): Wilson 95% interval with the Kish design effect over tools, as "
            "in the recall, escape and flag-precision tables; recall = detected / n "
            "(undecided pairs count as not detected); precision = correct flags / flags.",
            "held: the whole interval lies on the predicted side (floor f: lower end ≥ f; "
            "ceiling c: upper end ≤ c); failed: it lies wholly on the other side (floor: "
            "upper end < f; ceiling: lower end > c); undecided: it straddles the bound, or "
            "there are no pairs.",
            "negative control: held when the observed tool verdict is the predicted one, "
            "failed when it is another verdict, undecided when there is no verdict to test "
            "(no verdict, or UNTESTABLE against a predicted CONFORMS / VIOLATES).",
            "better_than: on the closed-world pairs both runs share; held when the support "
            "rule on evidence bounds and McNemar's exact test (p < 0.05) both say new>old, "
            "failed when the new upper evidence bound is at most the old lower one or the "
            "test says old>new, undecided otherwise (the paired table below).",
            f"{tally[Outcome.HELD]} held, {tally[Outcome.FAILED]} failed, "
            f"{tally[Outcome.UNDECIDED]} undecided of {len(predictions)}.",
        ),
        extra_macros=(
            ("N", len(predictions)),
            *((macro_word(o.value), tally[o]) for o in Outcome),
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
    """Every table that has rows, in a fixed order; an unfinished run's say so in their
    title and notes (the caption)."""
    tables = _tables(rows, meta)
    others = sorted({r.freeze_id for r in rows} - {meta.freeze_id})
    if others:  # rows that run.json does not account for: say so in every table
        note = f"rows also carry freeze ids {', '.join(others)} (run.json: {meta.freeze_id})."
        tables = [replace(t, notes=(*t.notes, note)) for t in tables]
    if (label := meta.unfinished(len(rows))) is not None:
        note = f"{label}: the run has not ended (run.json ended_at is null); not a result."
        tables = [replace(t, unfinished=label, notes=(note, *t.notes)) for t in tables]
    return tables


def _tables(rows: Sequence[LedgerRow], meta: RunMeta) -> list[Table]:
    frame = ledger_frame(rows, meta)  # every count below is a group-by over it
    tables = []
    if recall := closed_world_recall(frame):
        tables.append(recall_table(recall, meta))
    elif _empty_operators(meta, "closed_world"):  # nothing drawn at all: still say so
        tables.append(recall_table([], meta))
    if axes := observation_axis_recall(frame):
        tables.append(axis_table(axes, meta))
    if closed_causes := closed_world_miss_causes(frame):
        tables.append(closed_cause_table(closed_causes, meta))
    if specificity := control_specificity(frame):
        tables.append(specificity_table(specificity, meta))
    if flags := flag_precision(frame):
        tables.append(flag_precision_table(flags, meta))
    if controls := negative_controls(frame):
        tables.append(negative_control_table(controls, meta))
    if escapes := open_world_escapes(frame):
        tables.append(escape_table(escapes, meta))
        if causes := escape_causes(frame):
            tables.append(cause_table(causes, meta, escapes[-1].counts.post_hoc))
    if grader := grader_arm(frame):  # none for targets without a grader (the toy domain)
        tables.append(grader_table(grader, meta))
        tables.append(grader_tasks_table(grader_tasks_by_tool(frame), meta))
    if tools := per_tool(frame):
        tables.append(tool_table(tools, meta))
    if meta.pools:
        tables.append(pool_table(meta))
    # last, so `harness run` prints it last; a comparison checker's run has none to score
    predictions = (
        []
        if meta.comparison_run
        else score_frame_predictions(frame, meta.predictions, meta.project_root)
    )
    if predictions:
        source = (
            meta.predictions_source
            if meta.predictions is not None
            else "unknown (run.json records none and no frozen plan matched the run)"
        )
        tables.append(predictions_table(predictions, meta, source))
        if any(p.paired is not None for p in predictions):
            from harness.analysis.paired_table import paired_table

            tables.append(paired_table(predictions, meta))
    return tables

"""`harness plan check`: can each prediction of a plan be decided at the n it drew?

The rule, checked before the freeze (pre-registration practice: power before, not after):
for every recall floor and escape-rate ceiling, in every scope its pairs fall in (toy, real,
pooled, as the recall table groups them), with n = the drawn pairs and the design effect of
the plan's last published run for the same row (or one stated through an ICC):
  - best       the interval end the prediction is judged on at the best possible outcome
               (a floor: n of n detected; a ceiling: no escape);
  - never      best is on the wrong side of the bound: the prediction can never hold;
  - P(held)    exact binomial probability that it holds if the true rate is `assumed`
               (the last published run's observed rate for the row, else the best case);
  - n for 80%  the smallest n (same deff) at which it is decided (held or failed) with
               probability 0.8 at the assumed rate.
An escape ceiling's n is the live pairs, unknown before the run: the drawn pairs times the
live share of the last published row (or all drawn pairs, an upper bound). A precision
floor's n is the flags, also known only after the run: reported, not checked.
A prediction that can never hold is a warning; with the plan's
`predictions.undecidable: error` it is an error (draw and freeze refuse).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from harness.analysis.scoring import (
    ALL,
    TOY_TARGET,
    Scope,
    closed_world_recall,
    open_world_escapes,
)
from harness.analysis.statistics import Side, decidability, design_effect, n_to_decide
from harness.analysis.table_model import Column, Kind, Row, Table
from harness.errors import Problem
from harness.execution.draw import Corpus
from harness.execution.plan import POOLED_KEY, Plan, _family, in_benchmark
from harness.mutation.model import Arm

POWER = 0.8


@dataclass(frozen=True)
class Published:
    """The last published run's figures per (kind, scope, operator): deff and observed rate,
    and for escapes the live share."""

    run: str
    deff: dict[tuple[str, str, str], float]
    observed: dict[tuple[str, str, str], float]
    live_share: dict[str, float]


@dataclass(frozen=True)
class DecidabilityRow:
    kind: str  # recall_floor / escape_rate_ceiling / precision_floor
    scope: str
    subject: str
    predicted: str
    n: int | None  # None: not known before the run
    deff: float
    deff_source: str
    best: float | None
    can_hold: bool | None
    assumed: float | None
    assumed_source: str
    p_held: float | None
    p_decided: float | None
    n_for_power: int | None
    note: str = ""
    pool: int | None = None  # kept candidates of the row's arms and operators (recall rows)

    @property
    def never(self) -> bool:
        return self.can_hold is False


def last_published(root: Path, plan: str) -> Path | None:
    """The plan's published run that ended last (comparison checkers' runs left out)."""
    folder = root / "results" / "reference" / plan
    runs = []
    for manifest in sorted(folder.glob("*/run.json")) if folder.is_dir() else []:
        try:
            meta = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # unreadable: not a run to take a design effect from
            continue
        if manifest.parent.name.startswith(f"{meta.get('freeze_id')}."):
            continue
        if meta.get("ended_at"):
            runs.append((meta["ended_at"], manifest.parent))
    return max(runs)[1] if runs else None


def published_figures(run_dir: Path) -> Published:
    from harness.analysis.frame import ledger_frame
    from harness.analysis.runs import load_run

    meta, rows = load_run(run_dir)
    frame = ledger_frame(rows, meta)
    deff: dict[tuple[str, str, str], float] = {}
    observed: dict[tuple[str, str, str], float] = {}
    for r in closed_world_recall(frame):
        key = ("recall_floor", r.scope.value, r.operator)
        deff[key] = r.recall.clustered.deff
        if r.recall.value is not None:
            observed[key] = r.recall.value
    live: dict[str, float] = {}
    for e in open_world_escapes(frame):
        key = ("escape_rate_ceiling", Scope.POOLED.value, e.operator)
        deff[key] = e.escape.clustered.deff
        if e.escape.value is not None:
            observed[key] = e.escape.value
        if e.counts.n:
            live[e.operator] = e.escape.n / e.counts.n
    return Published(f"{meta.plan}/{run_dir.name}", deff, observed, live)


def _drawn(plan: Plan, corpus: Corpus) -> dict[tuple[str, str, str], list[str]]:
    """(kind, scope, operator key) -> the tool of each drawn pair, grouped as the tables
    group them: closed world per scope and operator (and `all`), and per benchmark of
    `benchmark_recall_floor` (scope = the benchmark), open world pooled per operator,
    family (`<family>/*`) and `all`."""
    benches = list(plan.predictions.benchmark_recall_floor)
    kinds = {a.name: a.kind for a in plan.arms}
    out: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for pair in corpus.pairs:
        kind, m = kinds.get(pair.arm), pair.mutant
        tool = f"{m.target}/{pair.tool}"
        if kind is Arm.CLOSED_WORLD:
            scope = Scope.TOY if m.target == TOY_TARGET else Scope.REAL
            scopes = [scope.value, Scope.POOLED.value]
            scopes += [b for b in benches if in_benchmark(m.target, b)]
            for s in scopes:
                for op in (m.operator, ALL):
                    out[("recall_floor", s, op)].append(tool)
        elif kind is Arm.OPEN_WORLD:
            for op in (m.operator, f"{_family(m.operator)}/*", ALL):
                out[("escape_rate_ceiling", Scope.POOLED.value, op)].append(tool)
    return out


def _row(
    kind: str,
    scope: str,
    subject: str,
    side: Side,
    bound: float,
    tools: list[str],
    published: Published | None,
    icc: float | None,
    assume: float | None,
) -> DecidabilityRow:
    key = (kind, scope, ALL if subject == POOLED_KEY else subject)
    n = len(tools)
    note = ""
    if kind == "escape_rate_ceiling":
        share = published.live_share.get(key[2]) if published else None
        if share is None:
            note = "escape n = drawn pairs (live pairs unknown before the run: an upper bound)"
        else:
            n = round(n * share)
            note = f"escape n = drawn × the published live share {share:.3f}"
    if icc is not None:
        m = n / max(1, len(set(tools)))
        deff, deff_source = design_effect(m, icc), f"ICC {icc:g}"
    elif published is not None and key in published.deff:
        deff, deff_source = published.deff[key], "published"
    else:
        deff, deff_source = 1.0, "none: 1"
    best_case = 1.0 if side == "floor" else 0.0
    if assume is not None:
        assumed, assumed_source = assume, "stated"
    elif published is not None and key in published.observed:
        assumed, assumed_source = published.observed[key], "published"
    else:
        assumed, assumed_source = best_case, "best"
    predicted = f"≥ {bound:.3f}" if side == "floor" else f"≤ {bound:.3f}"
    d = decidability(side, bound, n, deff, assumed)
    return DecidabilityRow(
        kind,
        scope,
        subject,
        predicted,
        n,
        deff,
        deff_source,
        d.best,
        d.can_hold,
        assumed,
        assumed_source,
        d.p_held,
        d.p_held + d.p_failed,
        n_to_decide(side, bound, deff, assumed, POWER),
        note,
    )


def check_plan(
    plan: Plan,
    corpus: Corpus,
    published: Published | None,
    icc: float | None = None,
    assume: float | None = None,
) -> list[DecidabilityRow]:
    """One row per prediction and scope that has drawn pairs (`check_plan` of the module
    docstring); a prediction with no drawn pair gets one row with n = 0 (never holds)."""
    drawn = _drawn(plan, corpus)
    out: list[DecidabilityRow] = []
    for bench, floors in plan.predictions.benchmark_recall_floor.items():
        for subject, bound in floors.items():
            op = ALL if subject == POOLED_KEY else subject
            tools = drawn.get(("recall_floor", bench, op), [])
            row = _row("recall_floor", bench, subject, "floor", bound, tools, None, icc, assume)
            out.append(row)
    for subject, bound in plan.predictions.recall_floor.items():
        op = ALL if subject == POOLED_KEY else subject
        scopes = [s.value for s in Scope if ("recall_floor", s.value, op) in drawn]
        for scope in scopes or [Scope.POOLED.value]:
            tools = drawn.get(("recall_floor", scope, op), [])
            row = _row(
                "recall_floor", scope, subject, "floor", bound, tools, published, icc, assume
            )
            out.append(replace(row, pool=_pool(plan, corpus, scope, op)))
    for subject, bound in plan.predictions.escape_rate_ceiling.items():
        op = ALL if subject == POOLED_KEY else subject
        tools = drawn.get(("escape_rate_ceiling", Scope.POOLED.value, op), [])
        out.append(
            _row(
                "escape_rate_ceiling",
                Scope.POOLED.value,
                subject,
                "ceiling",
                bound,
                tools,
                published,
                icc,
                assume,
            )
        )
    if plan.predictions.precision_floor is not None:
        bound = plan.predictions.precision_floor
        out.append(
            DecidabilityRow(
                "precision_floor",
                Scope.POOLED.value,
                "flags",
                f"≥ {bound:.3f}",
                None,
                1.0,
                "",
                None,
                None,
                None,
                "",
                None,
                None,
                None,
                "n = flags, known only after the run: not checked",
            )
        )
    return out


def _pool(plan: Plan, corpus: Corpus, scope: str, operator: str) -> int | None:
    """The kept candidates a closed-world row could ever draw (None: not recorded)."""
    kinds = {a.name: a.kind for a in plan.arms}
    chosen = [
        p
        for p in corpus.pools
        if kinds.get(p.arm) is Arm.CLOSED_WORLD
        and (operator == ALL or p.operator == operator)
        and (scope == Scope.POOLED.value or (scope == Scope.TOY.value) == (p.target == TOY_TARGET))
    ]
    return sum(p.kept for p in chosen) if chosen else None


def _fix(r: DecidabilityRow) -> str:
    if r.n_for_power is None:
        return "lower the bound or draw more pairs"
    if r.pool is not None and r.n_for_power > r.pool:
        return (
            f"lower the bound: the pool holds {r.pool} candidates, fewer than the "
            f"{r.n_for_power} that would decide it with 80% probability at {r.assumed:.3f}"
        )
    return (
        f"draw n ≥ {r.n_for_power} in that scope (decided with 80% probability at "
        f"{r.assumed:.3f}), or lower the bound"
    )


def undecidable_problems(plan_file: str, rows: list[DecidabilityRow]) -> list[Problem]:
    """One Problem per prediction that can never hold at its n (a warning, or an error under
    `predictions.undecidable: error`)."""
    return [
        Problem(
            plan_file,
            f"predictions.{r.kind}.{r.subject}",
            f"can never hold in scope {r.scope}: at n = {r.n} (deff {r.deff:.2f}) the best "
            f"outcome gives {r.best:.3f}, not {r.predicted}",
            _fix(r),
        )
        for r in rows
        if r.never
    ]


_KIND_WORD = {
    "recall_floor": "recall",
    "escape_rate_ceiling": "escape",
    "precision_floor": "precision",
}


def decidability_table(
    rows: list[DecidabilityRow], plan: str, freeze: str, published: str | None
) -> Table:
    """The rows as a table (for the terminal, and for a report if one wants it)."""
    columns = (
        Column("kind", "kind", Kind.TEXT),
        Column("scope", "scope", Kind.TEXT),
        Column("subject", "subject", Kind.TEXT),
        Column("predicted", "predicted", Kind.TEXT),
        Column("n", "n", Kind.INT),
        Column("deff", "deff", Kind.FLOAT),
        Column("deff src", "deff_source", Kind.TEXT),
        Column("best", "best", Kind.FLOAT),
        Column("can hold", "can_hold", Kind.TEXT),
        Column("at rate", "assumed", Kind.FLOAT),
        Column("rate src", "assumed_source", Kind.TEXT),
        Column("P(held)", "p_held", Kind.FLOAT),
        Column("P(decided)", "p_decided", Kind.FLOAT),
        Column("n for 80%", "n_for_power", Kind.INT),
    )

    def word(r: DecidabilityRow) -> str | None:
        return None if r.can_hold is None else "yes" if r.can_hold else "NEVER"

    body = tuple(
        Row(
            (
                _KIND_WORD.get(r.kind, r.kind),
                r.scope,
                r.subject,
                r.predicted,
                r.n,
                r.deff,
                r.deff_source,
                r.best,
                word(r),
                r.assumed,
                r.assumed_source,
                r.p_held,
                r.p_decided,
                r.n_for_power,
            )
        )
        for r in rows
    )
    never = sum(r.never for r in rows)
    source = f"the published run {published}" if published else "no published run"
    notes = (
        f"{never} of {len(rows)} rows can never hold at their n (NEVER).",
        f"deff src and rate src 'published': the row's figure in {source}; 'best': "
        "recall 1 or escape rate 0; 'none: 1': no design effect.",
        "best: the 95% Wilson (deff) end a floor is judged on at n of n detected, a "
        "ceiling at no escape. P(held), P(decided): exact binomial at the assumed rate. "
        "n for 80%: the smallest n with P(decided) ≥ 0.8 at the assumed rate and the same "
        "deff (— : none up to 2000).",
        *sorted({r.note for r in rows if r.note}),
    )
    return Table(
        "plan_check",
        f"Decidability of the predictions of {plan}",
        freeze,
        columns,
        body,
        notes=notes,
    )

"""The trace's tables as `harness.analysis.tables.Table` objects (rendered by the report's
own renderers): exposure per defect, the unresolved rows, the positive controls.

Counts are kept per basis and never added across bases; "exposed" (the evaluator reads a
named field), "reached" (a gold path calls the tool under its trigger) and "verdict
changed" (a positive control's shipped verdict differs between arms) stay separate columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.macros import macro_word, render_macros
from harness.analysis.table_model import Column, Kind, Row, Table
from harness.trace.basis import EXPOSED_BASES, Basis
from harness.trace.records import TraceResult


def _key(*parts: str) -> str:
    return "".join(macro_word(p) for p in parts)


def exposure_table(result: TraceResult) -> Table:
    columns = (
        Column("benchmark : tool", "tool", Kind.TEXT),
        Column("defect classes", "classes", Kind.TEXT, width="3cm"),
        Column("tasks", "tasks", Kind.INT, "Tasks"),
        *(Column(b.value, b.value, Kind.INT, macro_word(b.value)) for b in EXPOSED_BASES),
        Column("bound", "bound", Kind.TEXT),
        Column("gold-call", "gold_call", Kind.INT, "GoldCall"),
        Column("reached by gold", "reached", Kind.INT, "Reached"),
        Column("reach undetermined", "reach_undetermined", Kind.INT, "ReachUndetermined"),
        Column("exposed: state / transcript / mixed", "grounding", Kind.TEXT),
    )
    groups: dict[tuple[str, str, str | None], list] = {}
    for row in result.rows:
        groups.setdefault((row.target, row.tool, row.mutant_id), []).append(row)
    rows = []
    for (target, tool, mutant), members in groups.items():
        counts = {b: sum(1 for m in members if m.basis is b) for b in EXPOSED_BASES}
        exposed = [m for m in members if m.basis.exposed]
        grounding = "/".join(
            str(sum(1 for m in exposed if m.grounding == g))
            for g in ("state_grounded", "transcript_grounded", "mixed")
        )
        classes = sorted({c for c in members[0].defect_classes})
        rows.append(
            Row(
                (
                    f"{target} : {tool}" + (f" [mutant {mutant}]" if mutant else ""),
                    ", ".join(classes),
                    len(members),
                    *(counts[b] for b in EXPOSED_BASES),
                    "no" if counts[Basis.UNRESOLVED] else "yes",
                    sum(1 for m in members if m.gold_call),
                    sum(1 for m in members if m.reached is True),
                    sum(1 for m in members if m.gold_call and m.reached is None),
                    grounding,
                ),
                macro_key=_key(target, tool, mutant or ""),
            )
        )
    return Table(
        name="score_at_risk",
        title="Score at risk: tasks exposed to each defect, by basis",
        freeze=result.freeze,
        columns=columns,
        rows=tuple(rows),
        macro_prefix="Risk",
        notes=(
            "Exposed: the task's evaluator reads a field the defect should have written "
            "(exact_field), only its collection (collection_only), the whole state "
            "(whole_state_hash), or something the extractor could not name (unresolved). "
            "Bases are never added up; a count is a bound only when no row is unresolved.",
            "Gold-call: the task's ground truth calls the tool. Reached: that gold path calls "
            "it under a violated clause's trigger. A defect no gold path reaches says nothing "
            "of agent trajectories.",
        ),
    )


def unresolved_table(result: TraceResult) -> Table:
    columns = (
        Column("benchmark : tool", "tool", Kind.TEXT),
        Column("task", "task", Kind.TEXT),
        Column("read site", "where", Kind.TEXT),
        Column("why unresolved", "note", Kind.TEXT, width="5cm"),
    )
    rows = [
        Row((f"{r.target} : {r.tool}", r.task, s.where, s.note))
        for r in result.rows
        if r.basis is Basis.UNRESOLVED
        for s in r.unresolved_sites
    ]
    return Table(
        name="score_at_risk_unresolved",
        title="Score at risk: rows forced in as unresolved, with the read that forced each",
        freeze=result.freeze,
        columns=columns,
        rows=tuple(rows),
    )


def control_table(result: TraceResult) -> Table:
    columns = (
        Column("benchmark : tool", "tool", Kind.TEXT),
        Column("repair", "repair", Kind.TEXT),
        Column("tool arm", "arm", Kind.TEXT),
        Column("paths", "paths", Kind.INT, "Paths"),
        Column("shipped pass", "shipped_pass", Kind.INT, "ShippedPass"),
        Column("independent pass", "independent_pass", Kind.INT, "IndependentPass"),
        Column("state changed", "state_changed", Kind.INT, "StateChanged"),
        Column("verdict changed", "verdict_changed", Kind.INT, "VerdictChanged"),
        Column("pass defective, fail repaired", "headline", Kind.INT, "Headline"),
    )
    groups: dict[tuple[str, str, str], list] = {}
    for row in result.controls:
        groups.setdefault((row.target, row.tool, row.repair), []).append(row)
    rows = []
    for section, ((target, tool, repair), members) in enumerate(groups.items()):
        state = sum(1 for m in members if m.state_changed)
        changed = sum(1 for m in members if m.verdict_changed)
        headline = sum(
            1 for m in members if m.unrepaired.shipped_pass and not m.repaired.shipped_pass
        )
        for arm in ("unrepaired", "repaired"):
            results = [getattr(m, arm) for m in members]
            rows.append(
                Row(
                    (
                        f"{target} : {tool}",
                        repair,
                        arm,
                        len(members),
                        sum(1 for r in results if r.shipped_pass),
                        sum(1 for r in results if r.independent_pass is True),
                        state,
                        changed,
                        headline,
                    ),
                    macro_key=_key(target, repair, arm),
                    section=section,
                )
            )
    return Table(
        name="score_at_risk_controls",
        title="Positive controls: constructed paths against the unrepaired and the repaired tool",
        freeze=result.freeze,
        columns=columns,
        rows=tuple(rows),
        macro_prefix="Control",
        notes=(
            "Shipped: the benchmark's own evaluator. Independent: the violated clauses the "
            "repair names, evaluated on every call of the tool on the path (beside the shipped "
            "verdict, never in its place). State changed / verdict changed: the final state / "
            "the shipped verdict differs between the two arms (per path, same in both rows).",
        ),
    )


def trace_tables(result: TraceResult) -> list[Table]:
    return [exposure_table(result), unresolved_table(result), control_table(result)]


def macros_text(tables: Sequence[Table], source: str) -> str:
    header = [
        f"Numbers of the score-at-risk trace of {source}. Generated by harness trace; do not edit.",
        "Names: <Table><Row><Statistic>, letters only; see harness/analysis/macros.py.",
    ]
    entries = [
        (name, str(value) if isinstance(value, int) else f"{value:.3f}")
        for table in tables
        for name, value in table.macros()
    ]
    return render_macros(entries, header)

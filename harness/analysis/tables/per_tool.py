"""The per-tool table: every tool's pairs, detections and escapes."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.macros import macro_word
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    ToolRow,
)
from harness.analysis.table_model import (
    N_NOTE,
    Column,
    Kind,
    Row,
    Table,
)


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

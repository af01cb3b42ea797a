"""Forest plot of per-operator recall: the point estimate, its design-effect-adjusted Wilson
interval and the evidence bounds. Agg only (no display, no pyplot state); a fixed size, dpi
and style, and no Software or date metadata, so the same rows give the same PNG bytes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from harness.analysis.scoring import ALL, RecallRow

WIDTH_INCHES = 7.0
ROW_INCHES = 0.35
MARGIN_INCHES = 1.3
DPI = 120


def forest_plot(rows: Sequence[RecallRow], path: Path, title: str) -> None:
    """One line per operator (then `all`, in bold), top to bottom in the given order."""
    if not rows:
        raise ValueError("a forest plot needs at least one row")
    with matplotlib.style.context("default"):
        figure = Figure(figsize=(WIDTH_INCHES, MARGIN_INCHES + ROW_INCHES * len(rows)), dpi=DPI)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        ys = list(range(len(rows)))[::-1]
        for y, row in zip(ys, rows, strict=True):
            lo_ev, hi_ev = row.counts.evidence
            axes.plot([lo_ev, hi_ev], [y, y], color="0.8", linewidth=7, solid_capstyle="butt")
            ci = row.recall.clustered
            axes.plot([ci.lo, ci.hi], [y, y], color="C0", linewidth=1.5)
            if row.recall.value is not None:
                axes.plot([row.recall.value], [y], "o", color="C0", markersize=5)
        axes.set_yticks(ys)
        labels = axes.set_yticklabels([f"{r.operator} (n={r.counts.n})" for r in rows])
        for label, row in zip(labels, rows, strict=True):
            if row.operator == ALL:
                label.set_fontweight("bold")
        axes.set_xlim(-0.02, 1.02)
        axes.set_ylim(-0.7, len(rows) - 0.3)
        axes.set_xlabel(
            "recall (dot), 95% Wilson CI with design effect (line), evidence bounds (grey)",
            fontsize=8,
        )
        axes.set_title(title, fontsize=9)
        axes.grid(axis="x", color="0.9")
        figure.tight_layout()
        figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})

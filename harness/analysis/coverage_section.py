"""The contract-coverage section of `report.html`: per tool of the run's targets, the
forecast (written paths no effect constrains, `harness contracts coverage`) beside the
`no_clause` misses this run measured."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from pydantic import ValidationError

from harness.analysis.quality.coverage import CoverageReport
from harness.errors import Problem, UserError


def load_coverage(paths: Sequence[Path]) -> list[CoverageReport]:
    out = []
    for path in paths:
        try:
            out.append(CoverageReport.model_validate_json(path.read_bytes()))
        except (OSError, ValidationError) as exc:
            raise UserError(
                Problem(
                    str(path),
                    "coverage",
                    str(exc).splitlines()[0],
                    "give a JSON file `harness contracts coverage` wrote",
                )
            ) from None
    return out


def coverage_section(frame: pd.DataFrame, reports: Sequence[CoverageReport]) -> str:
    """An HTML section; tools of targets the run did not score are left out."""
    scored = set(frame["target"].astype(str))
    misses = (
        frame[frame["miss_cause"].astype(str) == "no_clause"]
        .groupby(["target", "tool"], observed=True)
        .size()
    )
    rows = []
    for report in reports:
        for target in report.targets:
            if target.target not in scored:
                continue
            for t in target.tools:
                measured = int(misses.get((t.target, t.tool), 0))
                paths = ", ".join(t.unconstrained_paths) or "—"
                rows.append(
                    f"<tr><td>{_e(t.target)}</td><td>{_e(t.tool)}</td>"
                    f"<td>{t.sentences_quoted}/{t.sentences}</td>"
                    f"<td>{len(t.constrained_paths)}/{len(t.written_paths)}</td>"
                    f"<td>{_e(paths)}</td><td>{measured}</td></tr>"
                )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "target",
            "tool",
            "sentences quoted",
            "written paths constrained",
            "unconstrained paths (forecast)",
            "no_clause misses (this run)",
        )
    )
    return (
        '<h2 id="contract-coverage">Contract coverage beside this run\'s no_clause misses</h2>'
        "<p>From <code>harness contracts coverage</code> (docs/contract-quality.md): a written "
        "path no effect constrains forecasts a <code>no_clause</code> miss.</p>"
        f'<table class="headline"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)

"""Coverage and agreement as Markdown, CSV and JSON (I/O at the edge: strings and files)."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

from harness.analysis.quality.agreement import AgreementReport
from harness.analysis.quality.coverage import CoverageReport, TargetCoverage, ToolCoverage

CSV_COLUMNS = [
    "target",
    "tool",
    "sentences",
    "sentences_quoted",
    "surface_share",
    "written_paths",
    "constrained_paths",
    "state_share",
    "unconstrained_paths",
    "frame_declared_paths",
    "probes",
    "probes_signalled",
    "biconditional",
    "clauses_by_kind",
    "clauses_by_tier",
    "no_clause_closed_world",
    "no_clause_open_world",
]


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _misses(tool: ToolCoverage, world: str) -> str:
    hits = [n for run, n in tool.no_clause_misses.items() if f"/{world}" in run]  # scored
    return str(sum(hits)) if hits else "–"


def coverage_csv(report: CoverageReport) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for target in report.targets:
        for t in target.tools:
            writer.writerow(
                [
                    t.target,
                    t.tool,
                    t.sentences,
                    t.sentences_quoted,
                    _share(t.surface_share),
                    len(t.written_paths),
                    len(t.constrained_paths),
                    _share(t.state_share),
                    " ".join(t.unconstrained_paths),
                    " ".join(t.frame_declared_paths),
                    t.probes,
                    t.probes_signalled,
                    t.biconditional,
                    json.dumps(t.clauses_by_kind, sort_keys=True),
                    json.dumps(t.clauses_by_tier, sort_keys=True),
                    _misses(t, "closed_world"),
                    _misses(t, "open_world"),
                ]
            )
    return out.getvalue()


def _target_md(target: TargetCoverage) -> list[str]:
    quoted, sentences = target.sentences
    constrained, written = target.paths
    lines = [
        f"## {target.target}",
        "",
        f"Surface: {quoted} of {sentences} sentences quoted; state: {constrained} of "
        f"{written} written paths constrained by an effect.",
        "",
        "| tool | sentences quoted | written paths constrained | unconstrained paths | "
        "no_clause closed | no_clause open | clauses (kind) | tiers | biconditional |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for t in target.tools:
        kinds = " ".join(f"{k} {v}" for k, v in t.clauses_by_kind.items())
        tiers = " ".join(f"{k} {v}" for k, v in t.clauses_by_tier.items())
        unconstrained = ", ".join(f"`{p}`" for p in t.unconstrained_paths) or "–"
        lines.append(
            f"| {t.tool} | {t.sentences_quoted}/{t.sentences} | "
            f"{len(t.constrained_paths)}/{len(t.written_paths)} | {unconstrained} | "
            f"{_misses(t, 'closed_world')} | {_misses(t, 'open_world')} | {kinds} | {tiers} | "
            f"{'yes' if t.biconditional else 'no'} |"
        )
    unobserved = [t.tool for t in target.tools if not t.probes_signalled]
    lines += [
        "",
        "No probe succeeded, so no write was observed (state coverage unmeasured): "
        + (", ".join(unobserved) or "–")
        + ".",
        "",
        "Uncovered sentences:",
        "",
    ]
    for t in target.tools:
        for s in t.uncovered:
            lines.append(f"- {t.tool} ({s.surface}): {s.text}")
    if not any(t.uncovered for t in target.tools):
        lines.append("- none")
    lines.append("")
    return lines


def forecast_lines(tools: list[ToolCoverage], runs: list[str]) -> list[str]:
    """Per measured run: the tools with an unconstrained path against the tools with a
    `no_clause` miss (2x2), and Spearman's rho between the two counts over the tools."""
    from scipy.stats import spearmanr

    lines = ["## Forecast beside measured", ""]
    if not runs:
        return [*lines, "No run given (`--runs`): nothing measured.", ""]
    lines += [
        "| run | tools it scored | forecast & missed | forecast, not missed | "
        "missed, not forecast | neither | Spearman rho (unconstrained paths, no_clause misses) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        scored = [t for t in tools if run in t.no_clause_misses]  # unscored tools: no measure
        forecast = [len(t.unconstrained_paths) for t in scored]
        measured = [t.no_clause_misses[run] for t in scored]
        cells = Counter((f > 0, m > 0) for f, m in zip(forecast, measured, strict=True))
        if len(set(forecast)) > 1 and len(set(measured)) > 1:
            rho = f"{spearmanr(forecast, measured).statistic:.2f}"
        else:
            rho = "undefined (one side constant)"
        lines.append(
            f"| `{run}` | {len(scored)} | {cells[(True, True)]} | {cells[(True, False)]} | "
            f"{cells[(False, True)]} | {cells[(False, False)]} | {rho} |"
        )
    return [*lines, ""]


def coverage_md(report: CoverageReport) -> str:
    lines = [
        "# Contract coverage",
        "",
        "Surface coverage: sentences of the agent-visible surfaces some clause quotes. State "
        "coverage: state paths written on generated probes (docs/contract-quality.md) whose "
        "write, reverted alone, breaks some effect. `no_clause` misses: "
        + (
            "measured on " + ", ".join(f"`{r}`" for r in report.runs)
            if report.runs
            else "none measured (no run given)"
        )
        + " (– where no run scored the tool).",
        "",
        f"Seed {report.seed}; corpus: {report.corpus or 'none (generated probes only)'}.",
        "",
    ]
    tools = [t for target in report.targets for t in target.tools]
    lines += forecast_lines(tools, report.runs)
    for target in report.targets:
        lines += _target_md(target)
    return "\n".join(lines)


def write_coverage(report: CoverageReport, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        out / f"{stem}.json": report.model_dump_json(indent=1) + "\n",
        out / f"{stem}.csv": coverage_csv(report),
        out / f"{stem}.md": coverage_md(report),
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)


def _figure(f) -> str:  # type: ignore[no-untyped-def]
    return f"{f.agree} of {f.n} (Wilson 95% {f.low:.3f}–{f.high:.3f})"


def agreement_md(report: AgreementReport) -> str:
    lines = [
        "# Contract agreement",
        "",
        f"A: `{report.set_a}`; B: `{report.set_b}`. Corpus `{report.corpus}`, sha256 "
        f"`{report.corpus_sha256}`: {report.corpus_built_by}",
        "",
        "A comparison is a (tool, clause pair, probe) where at least one side's clause applies; "
        "UNTESTABLE against anything, and n/a against a verdict, are disagreements. Strata "
        "are never pooled.",
        "",
        "A second measure needs no pairing: the whole contract's verdict per probe (every "
        "graded clause, paired or not: VIOLATES if one violates, else CONFORMS if one "
        "conforms, else UNTESTABLE if one is), probes where both are n/a left out.",
        "",
        "| stratum | clause pairs agree | whole-contract verdicts agree |",
        "| --- | --- | --- |",
        *(
            f"| {s} | {_figure(f)} | {_figure(report.strata_tool_verdicts[s])} |"
            for s, f in report.strata.items()
        ),
        "",
        "| target | tool | stratum | probes | clause pairs agree | whole-contract verdicts agree "
        "| pairs (by id / by quote) | only in A | only in B | neither applies |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for t in report.tools:
        by_id = sum(p.by == "id" for p in t.pairing.pairs)
        by_quote = sum(p.by == "quote" for p in t.pairing.pairs)
        lines.append(
            f"| {t.target} | {t.tool} | {t.stratum} | {t.probes} | {_figure(t.figure)} | "
            f"{_figure(t.tool_verdicts)} | "
            f"{by_id} / {by_quote} | {', '.join(t.pairing.only_a) or '–'} | "
            f"{', '.join(t.pairing.only_b) or '–'} | {t.neither_applies} |"
        )
    if report.only_in_a or report.only_in_b:
        lines += [
            "",
            f"Tools only in A: {', '.join(report.only_in_a) or '–'}; only in B: "
            f"{', '.join(report.only_in_b) or '–'}.",
        ]
    lines += ["", f"## Disagreements ({len(report.disagreements)})", ""]
    for d in report.disagreements:
        p = d.probe
        outcome = f"result {p.result!r}" if p.success else f"error {p.error}"
        lines += [
            f"- **{d.target}/{d.tool}** A `{d.a}` vs B `{d.b}` (by {d.paired_by}); probe "
            f"#{p.index} {p.kind} args `{json.dumps(p.args, sort_keys=True)}` → "
            f"{outcome[:200]}; changed {', '.join(p.state_diff) or 'nothing'}",
            f"  - A: {d.verdict_a.verdict}: {d.verdict_a.detail}",
            f"  - B: {d.verdict_b.verdict}: {d.verdict_b.detail}",
        ]
    lines += [
        "",
        f"## Whole-contract verdicts that differ ({len(report.tool_verdict_disagreements)})",
        "",
    ]
    for w in report.tool_verdict_disagreements:
        p = w.probe
        lines.append(
            f"- **{w.target}/{w.tool}** probe #{p.index} {p.kind}: A {w.verdict_a} "
            f"({', '.join(w.violated_a) or 'nothing violated'}), B {w.verdict_b} "
            f"({', '.join(w.violated_b) or 'nothing violated'})"
        )
    return "\n".join(lines) + "\n"


def write_agreement(report: AgreementReport, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        out / "agreement.json": report.model_dump_json(indent=1) + "\n",
        out / "agreement.md": agreement_md(report),
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)

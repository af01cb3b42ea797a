"""`harness baseline`: the checker's verdicts on the ORIGINAL tools of some targets, a result
in its own right (what the checker finds in a benchmark as shipped).

Writes `tools.jsonl` (one row per tool: verdict, the violated clauses with class and
witness, the untestable clauses with reason), `reports/<target>.json` (the full reports)
and `SUMMARY.md`. Files are written to a temporary folder and moved into place whole.

Each violated clause carries its tier (`finding_tier`): the clause's derived tier, except
that an unenforced precondition whose witness calls were all refused broke only
"a refused call leaves the state unchanged", which cites no surface (inferred). A tool's
finding is *headline-eligible* when at least one violated clause is agent-visible; the
summary counts those tools apart from the rest.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from harness.checker.verdicts import CheckReport, ClauseVerdict, DefectClass, Verdict
from harness.contracts.model import AGENT_VISIBLE_SURFACES, Contract, Tier
from harness.targets.adapter import GraderAdapter
from harness.targets.registry import Target, load_target


def _clause_texts(target: Target, tool: str) -> dict[str, str]:
    contract = target.contracts[tool]
    texts = {
        c.id: c.text
        for field in ("preconditions", "effects", "frame", "arguments", "invariants")
        for c in getattr(contract, field)
    }
    texts["success"] = "a call satisfying every precondition succeeds"
    texts["reset"] = "reset restores a fresh environment"
    return texts


def finding_tier(contract: Contract, clause: ClauseVerdict) -> Tier:
    """The tier of the promise a violation breaks (module rule)."""
    witness = clause.witness
    if (
        clause.defect_class is DefectClass.UNENFORCED_PRECONDITION
        and witness is not None
        and witness.probes
        and not any(probe.success for probe in witness.probes)
    ):
        return contract.refusal_tier
    return contract.clause_tier(clause.clause_id)


def tool_rows(target: Target, report: CheckReport) -> list[dict[str, Any]]:
    grader = target.adapter if isinstance(target.adapter, GraderAdapter) else None
    rows = []
    for tool in report.tools:
        texts = _clause_texts(target, tool.tool)
        contract = target.contracts[tool.tool]
        violations = [
            {
                "clause_id": c.clause_id,
                "text": texts.get(c.clause_id, ""),
                "defect_class": c.defect_class.value if c.defect_class else None,
                "tier": finding_tier(contract, c).value,
                "witness": c.witness.model_dump(mode="json") if c.witness else None,
            }
            for c in tool.violations()
        ]
        rows.append(
            {
                "target": report.target,
                "target_version": report.target_version,
                "checker": f"{report.checker} {report.checker_version}",
                "tool": tool.tool,
                "verdict": tool.verdict.value,
                "violations": violations,
                "headline_eligible": any(v["tier"] == Tier.AGENT_VISIBLE.value for v in violations),
                "untestable": [
                    {
                        "clause_id": c.clause_id,
                        "reason": c.reason.value if c.reason else None,
                        "detail": c.detail,
                    }
                    for c in tool.clauses
                    if c.verdict is Verdict.UNTESTABLE
                ],
                "clauses": len(tool.clauses),
                "probes_run": tool.probes_run,
                # the benchmark's own scores a defect in this tool could corrupt
                "dependent_tasks": grader.grader_tasks(tool.tool) if grader else None,
            }
        )
    return rows


def _summary(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Checker verdicts on the original tools",
        "",
        "Written by `harness baseline`; do not edit. A VIOLATES here is a finding about the "
        "benchmark as shipped (or about its contract): read the witness.",
        "",
        "A finding is headline-eligible when a violated clause is agent-visible (its quote is "
        "on a surface an agent reads: "
        + ", ".join(sorted(s.value for s in AGENT_VISIBLE_SURFACES))
        + "). Tiers: agent_visible, maintainer_annotated, inferred (no surface).",
        "",
        "| target | tool | verdict | headline | violated clauses (class, tier) "
        "| untestable clauses | tasks whose ground truth calls it |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        violated = ", ".join(
            f"`{v['clause_id']}` ({v['defect_class']}, {v['tier']})" for v in row["violations"]
        )
        headline = "yes" if row["headline_eligible"] else "—"
        untestable = ", ".join(f"`{u['clause_id']}` ({u['reason']})" for u in row["untestable"])
        tasks = row["dependent_tasks"]
        depends = "n/a" if tasks is None else f"{len(tasks)}: {', '.join(tasks)}" if tasks else "0"
        lines.append(
            f"| {row['target']} | `{row['tool']}` | {row['verdict']} | {headline} | "
            f"{violated or '—'} | {untestable or '—'} | {depends} |"
        )
    totals = Counter(row["verdict"] for row in rows)
    violating = [row for row in rows if row["violations"]]
    eligible = sum(1 for row in violating if row["headline_eligible"])
    clauses = Counter(v["tier"] for row in violating for v in row["violations"])
    lines += [
        "",
        "Totals: " + ", ".join(f"{n} {v}" for v, n in sorted(totals.items())),
        "",
        f"Headline: {eligible} tools with a headline-eligible finding (an agent-visible "
        f"clause violated); {len(violating) - eligible} tools violate only clauses that are "
        "not agent-visible. Violated clauses by tier: "
        + ", ".join(f"{n} {tier}" for tier, n in sorted(clauses.items()))
        + ".",
        "",
    ]
    for row in rows:
        for v in row["violations"]:
            witness = v["witness"] or {}
            lines += [
                f"## {row['target']} `{row['tool']}` — `{v['clause_id']}` ({v['defect_class']}, "
                f"{v['tier']})",
                "",
                f"Clause: {v['text']}",
                "",
                f"Witness: {witness.get('detail', '')}",
                "",
            ]
            for probe in witness.get("probes", []):
                outcome = (
                    "ok" if probe["success"] else f"{probe['error_type']}: {probe['error_message']}"
                )
                lines.append(
                    f"- {probe['kind']}: `{probe['tool']}({json.dumps(probe['args'])})` → {outcome}"
                )
            changes = witness.get("state_diff", [])[:6]
            if changes:
                lines.append(
                    "- state changes: "
                    + "; ".join(
                        f"`{c['path']}`: {json.dumps(c['before'])} → {json.dumps(c['after'])}"
                        for c in changes
                    )
                )
            lines.append("")
    return "\n".join(lines)


def baseline(targets: list[str], out: Path, checker: Any) -> list[dict[str, Any]]:
    tmp = out.with_name(f".{out.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "reports").mkdir(parents=True)
    rows: list[dict[str, Any]] = []
    for name in targets:
        target = load_target(name)
        report = checker.check(target)
        (tmp / "reports" / f"{name}.json").write_text(report.model_dump_json(indent=1) + "\n")
        rows += tool_rows(target, report)
    with (tmp / "tools.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row, sort_keys=True) + "\n")
    (tmp / "SUMMARY.md").write_text(_summary(rows))
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return rows

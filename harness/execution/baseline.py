"""`harness baseline`: the checker's verdicts on the ORIGINAL tools of some targets, a result
in its own right (what the checker finds in a benchmark as shipped).

Writes `tools.jsonl` (one row per tool: verdict, the violated clauses with class and
witness, the untestable clauses with reason), `reports/<target>.json` (the full reports)
and `SUMMARY.md`. Files are written to a temporary folder and moved into place whole.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from harness.checker.verdicts import CheckReport, Verdict
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


def tool_rows(target: Target, report: CheckReport) -> list[dict[str, Any]]:
    grader = target.adapter if isinstance(target.adapter, GraderAdapter) else None
    rows = []
    for tool in report.tools:
        texts = _clause_texts(target, tool.tool)
        rows.append(
            {
                "target": report.target,
                "target_version": report.target_version,
                "checker": f"{report.checker} {report.checker_version}",
                "tool": tool.tool,
                "verdict": tool.verdict.value,
                "violations": [
                    {
                        "clause_id": c.clause_id,
                        "text": texts.get(c.clause_id, ""),
                        "defect_class": c.defect_class.value if c.defect_class else None,
                        "witness": c.witness.model_dump(mode="json") if c.witness else None,
                    }
                    for c in tool.violations()
                ],
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
        "| target | tool | verdict | violated clauses (class) | untestable clauses "
        "| tasks whose ground truth calls it |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        violated = ", ".join(f"`{v['clause_id']}` ({v['defect_class']})" for v in row["violations"])
        untestable = ", ".join(f"`{u['clause_id']}` ({u['reason']})" for u in row["untestable"])
        tasks = row["dependent_tasks"]
        depends = "n/a" if tasks is None else f"{len(tasks)}: {', '.join(tasks)}" if tasks else "0"
        lines.append(
            f"| {row['target']} | `{row['tool']}` | {row['verdict']} | "
            f"{violated or '—'} | {untestable or '—'} | {depends} |"
        )
    totals: dict[str, int] = {}
    for row in rows:
        totals[row["verdict"]] = totals.get(row["verdict"], 0) + 1
    lines += ["", "Totals: " + ", ".join(f"{n} {v}" for v, n in sorted(totals.items())), ""]
    for row in rows:
        for v in row["violations"]:
            witness = v["witness"] or {}
            lines += [
                f"## {row['target']} `{row['tool']}` — `{v['clause_id']}` ({v['defect_class']})",
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

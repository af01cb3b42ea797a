"""`harness trace`: for every VIOLATES tool of a baseline, the (defect, task) ledger, the
repairs validated, the positive controls run, and the tables.

Writes into OUT (built in a temporary folder and moved into place whole): `trace.jsonl`
(one `TraceRow` per (defect, task)), `repairs.jsonl`, `controls.jsonl`, `tables/` (md,
LaTeX, CSV per table) and `macros.tex`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.errors import Problem, UserError
from harness.mutation.apply import StaleMutant, applied, check_fresh
from harness.targets.registry import Target, load_target
from harness.trace.basis import Basis, basis_of, grounding_of, matching_sites
from harness.trace.clauses import clause_fails
from harness.trace.controls import run_controls
from harness.trace.fields import defect_fields
from harness.trace.readsites import read_sites
from harness.trace.records import (
    Defect,
    RepairRecord,
    TraceResult,
    TraceRow,
    site_record,
)
from harness.trace.repairs import Repair, load_repairs, validate
from harness.trace.suites import PathRun, TaskSource, suite_for
from harness.trace.tables import macros_text, trace_tables

Progress = Callable[[str], None]


def read_defects(source: Path) -> tuple[list[Defect], bool]:
    """(defects, from a run): the VIOLATES tools of a baseline folder (`harness baseline`'s
    tools.jsonl), or the detected pairs of a run folder (its ledger and drawn corpus)."""
    if (source / "run.json").is_file() and (source / "ledger.jsonl").is_file():
        return _run_defects(source), True
    tools = source / "tools.jsonl"
    if not tools.is_file():
        raise UserError(
            Problem(
                str(source),
                "--from",
                "has neither tools.jsonl nor run.json and ledger.jsonl",
                "pass a folder written by `harness baseline` (e.g. results/agentdojo-baseline) "
                "or a run folder",
            )
        )
    defects = []
    for number, line in enumerate(tools.read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
            if row["verdict"] == "VIOLATES":
                defects.append(
                    Defect(row["target"], row["target_version"], row["tool"], row["violations"])
                )
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise UserError(
                Problem(str(tools), f"line {number}", f"is not a baseline row ({exc})",
                        "rerun `harness baseline`")
            ) from None  # fmt: skip
    return defects, False


def _run_defects(source: Path) -> list[Defect]:
    from harness.analysis.runs import load_corpus_for, load_run
    from harness.execution.ledger import PairStatus

    meta, rows = load_run(source)
    corpus, why = load_corpus_for(source, meta.plan)
    if corpus is None:
        raise UserError(Problem(str(source), "--from", why, "trace a run under results/<plan>/"))
    mutants = {pair.mutant.id: pair.mutant for pair in corpus.pairs}
    defects = []
    for row in rows:
        if row.status is not PairStatus.DETECTED:
            continue
        witness = row.witness.model_dump(mode="json") if row.witness else None
        violations = [
            {
                "clause_id": v.clause_id,
                "defect_class": v.defect_class.value if v.defect_class else None,
                "witness": witness,
            }
            for v in row.new_violations
        ]
        mutant = mutants.get(row.mutant_id)
        if mutant is None:
            raise UserError(
                Problem(str(source), f"pair {row.pair_id}", "its mutant is not in the drawn corpus",
                        "trace the run beside the corpus it was drawn from")
            )  # fmt: skip
        defects.append(Defect(row.target, row.target_version, row.tool, violations, mutant))
    return defects


def _reach(
    target: Target, defect: Defect, runs: dict[str, PathRun]
) -> tuple[bool | None, list[str]]:
    """Whether some call of the tool on the gold path triggers a violated clause."""
    contract = target.contracts[defect.tool]
    masks = [*target.adapter.volatile_paths(), *contract.volatile]
    reaching, undetermined = set(), False
    for run in runs.values():
        for record in run.calls:
            if record.tool != defect.tool:
                continue
            for clause in defect.clauses:
                verdict = clause_fails(contract, clause, record, masks)
                if verdict is None:
                    undetermined = True
                elif verdict:
                    reaching.add(clause)
    if reaching:
        return True, sorted(reaching)
    return (None if undetermined else False), []


def trace_target(
    target: Target,
    defects: list[Defect],
    repairs_root: Path,
    checker: Any,
    progress: Progress,
    controls: bool = True,
) -> TraceResult:
    tasks: TaskSource = suite_for(target)
    live = tasks.live_state()
    task_ids = tasks.task_ids()
    progress(f"{target.name}: reading the evaluators of {len(task_ids)} tasks")
    # a source whose scorers are not one Python function per task (tau2) reads its own sites
    reader = getattr(tasks, "read_sites", None)
    sites = {
        t: reader(t, live) if reader else read_sites(tasks.evaluators(t), live) for t in task_ids
    }
    gold = {t: tasks.gold_calls(t) for t in task_ids}
    result = TraceResult()
    gold_runs: dict[str, PathRun] = {}
    for defect in defects:
        contract = target.contracts.get(defect.tool)
        if contract is None:
            raise UserError(
                Problem(target.name, f"tool {defect.tool}", "has no contract",
                        "rerun the baseline with the current contracts")
            )  # fmt: skip
        by_clause = {
            v["clause_id"]: defect_fields(contract, v["clause_id"], v.get("witness"))
            for v in defect.violations
        }
        fields = sorted({f for fs in by_clause.values() for f in fs})
        callers = [t for t in task_ids if any(c.tool == defect.tool for c in gold[t])]
        if defect.mutant is not None:  # the gold paths run on the mutated tool
            try:
                check_fresh(target.adapter, defect.mutant)
            except StaleMutant as exc:
                raise UserError(
                    Problem(target.name, f"mutant {defect.mutant.id}",
                            f"{defect.mutant.site.file}:{defect.mutant.site.qualname} changed "
                            "since the run's mutants were drawn",
                            "trace a run of the freeze that matches the installed target")
                ) from exc  # fmt: skip
            with applied(target.adapter, defect.mutant):
                runs = {task: tasks.run(task, gold[task]) for task in callers}
        else:
            for task in callers:
                if task not in gold_runs:
                    gold_runs[task] = tasks.run(task, gold[task])
            runs = gold_runs
        progress(f"{target.name} {defect.tool}: {len(callers)} gold-call tasks replayed")
        for task in task_ids:
            matches = matching_sites(fields, sites[task])
            reached, reaching = (
                _reach(target, defect, {task: runs[task]}) if task in callers else (None, [])
            )
            basis = basis_of(matches)
            result.rows.append(
                TraceRow(
                    target=target.name,
                    target_version=defect.target_version,
                    tool=defect.tool,
                    mutant_id=defect.mutant.id if defect.mutant else None,
                    clauses=defect.clauses,
                    defect_classes=[str(v.get("defect_class")) for v in defect.violations],
                    fields=[".".join(f) for f in fields],
                    task=task,
                    basis=basis,
                    by_clause={
                        c: basis_of(matching_sites(fs, sites[task])) for c, fs in by_clause.items()
                    },
                    grounding=grounding_of(sites[task]).value,
                    matched_sites=[site_record(s) for s in matches[basis]] if basis.exposed else [],
                    unresolved_sites=[site_record(s) for s in matches[Basis.UNRESOLVED]],
                    gold_call=task in callers,
                    reached=reached,
                    reaching_clauses=reaching,
                )
            )
    by_tool = {d.tool: d for d in defects if d.mutant is None}
    # repairs are of the benchmark as shipped: a run's defects are mutants, and have none
    for repair in load_repairs(target, repairs_root) if by_tool or not defects else []:
        defect = by_tool.get(repair.spec.tool)
        named = set(repair.spec.clauses) & set(defect.clauses if defect else ())
        if not named:
            # the baseline no longer has the defect (a narrowed contract, a fixed tool): the
            # repair has nothing to repair here; kept on record, never validated or counted
            progress(f"{repair.diff_path}: stale, {repair.spec.tool} violates none of its clauses")
            result.repairs.append(_repair_record(repair, set(), [], stale=True))
            continue
        assert defect is not None
        progress(f"{target.name} {repair.spec.tool}: validating repair {repair.name}")
        after = validate(target, repair, set(defect.clauses), checker)
        cannot: list[str] = []
        if controls and repair.spec.control is not None:
            callers = [t for t in task_ids if any(c.tool == defect.tool for c in gold[t])]
            rows, cannot = run_controls(target, tasks, repair, callers)
            result.controls += rows
            progress(f"{target.name} {repair.spec.tool}: {len(rows)} positive-control paths")
        result.repairs.append(_repair_record(repair, after, cannot))
    return result


def _repair_record(
    repair: Repair, after: set[str], cannot: list[str], stale: bool = False
) -> RepairRecord:
    return RepairRecord(
        status="stale" if stale else "validated",
        target=repair.target,
        tool=repair.spec.tool,
        repair=repair.name,
        clauses_repaired=sorted(repair.spec.clauses),
        still_violated=sorted(after),
        text=repair.spec.text,
        diff=repair.mutant.diff,
        construction=repair.spec.control.text if repair.spec.control else None,
        could_not_hold=cannot,
    )


def trace(
    targets: list[str],
    source: Path,
    out: Path,
    repairs_root: Path,
    checker: Any,
    progress: Progress = lambda _: None,
    controls: bool = True,
) -> TraceResult:
    defects, from_run = read_defects(source)
    if from_run:
        progress(f"{len(defects)} detected pairs of the run; repairs are not applied to mutants")
    loaded = {}
    for name in targets:
        loaded[name] = load_target(name)
    names = {t.name for t in loaded.values()}
    covered = {d.target for d in defects} & names
    if not covered and defects:
        raise UserError(
            Problem(str(source), "--from", f"has no rows of {', '.join(sorted(names))}",
                    "pass the targets the baseline covers")
        )  # fmt: skip
    result = TraceResult(source=str(source))
    if from_run:
        result.freeze = json.loads((source / "run.json").read_text(encoding="utf-8"))["freeze_id"]
    for target in loaded.values():
        mine = [d for d in defects if d.target == target.name]
        part = trace_target(target, mine, repairs_root, checker, progress, controls)
        result.rows += part.rows
        result.repairs += part.repairs
        result.controls += part.controls
    write(result, out)
    return result


def write(result: TraceResult, out: Path) -> None:
    from harness.analysis.render import render_markdown
    from harness.analysis.report import write_tables

    tmp = out.with_name(f".{out.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for name, records in (
        ("trace.jsonl", result.rows),
        ("repairs.jsonl", result.repairs),
        ("controls.jsonl", result.controls),
    ):
        text = "".join(r.model_dump_json() + "\n" for r in records)
        (tmp / name).write_bytes(text.encode("utf-8"))
    tables = trace_tables(result)
    write_tables(tables, tmp / "tables")
    summary = [
        "# Score at risk",
        "",
        f"Written by `harness trace` from `{result.source}`; do not edit. Rows: trace.jsonl "
        "(one per defect and task); repairs.jsonl; controls.jsonl.",
        "",
        *(render_markdown(t) for t in tables),
    ]
    (tmp / "SUMMARY.md").write_bytes("\n".join(summary).encode("utf-8"))
    (tmp / "macros.tex").write_bytes(macros_text(tables, result.source).encode("utf-8"))
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)

"""Exhaustive pools, scored with coverage-guided scoring on and off: the same rows, and how fast.

    python bench/exhaustive.py [--all-targets] [--workers N] [--only-on] [--keep DIR]
    python bench/exhaustive.py --all-targets --against-published [--workers N]

Draws `plans/closed_world_all.yaml` and `plans/open_world_all.yaml` (every screened
candidate of every arm) in a throwaway project under a temporary folder (never in the
repository; the negative controls are copied), restricted by default to the arms on the toy
domain and AgentDojo's four suites (issue 20's target: both pools in under 3 minutes on 2
cores); `--all-targets` keeps the tau2-bench arms too. Each plan is run by `execute`, with
coverage-guided scoring on, then off (`--only-on`: on only). Prints per plan the pairs, wall
seconds, pairs per second, the speed-up, the pairs scored without a worker and the runs taken
from the original, and FAILS (exit 1) naming the first differing pairs when any row differs
(`LedgerRow.comparable`: timing and how a row was obtained aside). Writes
results/bench/exhaustive-<date>[-all].json and .md. The machine may be shared: the load
average is printed beside every time. Like `harness run`, it runs under PYTHONHASHSEED=0
unless a seed is set (`harness.cli.fixed_hash_seed`).

`--against-published` runs each plan with coverage OFF only and compares its rows with the
published run of the plan's current freeze (`results/reference/<plan>/<freeze id>`, scored
with coverage on), freeze id aside: the identity check of the published exhaustive runs
themselves, at the cost of one run instead of two.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from common import (
    RESULTS,
    RowClock,
    add_output_options,
    ledger_differences,
    load,
    output_stem,
    said,
    throwaway_project,
    today,
)

from harness.cli import fixed_hash_seed
from harness.execution.ledger import LedgerRow
from harness.execution.runner import execute

REPO = Path(__file__).resolve().parent.parent
PLANS = ("closed_world_all", "open_world_all")
TARGET_SECONDS = 180.0  # both toy + AgentDojo pools, coverage on, 2 workers (issue 20)


def plan_text(name: str, all_targets: bool) -> str:
    """The repository's exhaustive plan, without its tau2 arms unless `all_targets`."""
    data = yaml.safe_load((REPO / "plans" / f"{name}.yaml").read_text())
    if not all_targets:
        data["arms"] = [a for a in data["arms"] if "tau2" not in json.dumps(a["target"])]
    return yaml.safe_dump(data, sort_keys=False)


def scored(plan_path: Path, workers: int, skip: bool) -> dict[str, Any]:
    shutil.rmtree(plan_path.parent.parent / "results", ignore_errors=True)  # no resume
    before = load()
    clock = RowClock()
    began = time.perf_counter()
    result = execute(plan_path, workers=workers, skip_by_coverage=skip, progress=clock)
    seconds = time.perf_counter() - began
    rows = sorted(result.rows, key=lambda r: r.pair_id)
    return {
        "seconds": round(seconds, 1),
        "first_row_seconds": round(clock.first - began, 1),
        "pairs_per_second": round(len(rows) / seconds, 2),
        "load_average_before": before,
        "load_average_after": load(),
        "skipped_by_coverage": sum(r.skipped_by_coverage for r in rows),
        "reused_runs": sum(r.reused_runs for r in rows),
        "rows": rows,
    }


def published(name: str) -> tuple[Path, list[LedgerRow]]:
    """The published run of the plan's current freeze, and its rows."""
    from harness.execution.ledger import read_rows

    record = json.loads((REPO / "plans" / f"{name}.freeze.json").read_text())
    folder = REPO / "results" / "reference" / name / record["freeze_id"]
    if not (folder / "ledger.jsonl").exists():
        raise SystemExit(f"{folder.relative_to(REPO)}: no published run of the current freeze")
    return folder, list(read_rows(folder / "ledger.jsonl"))


def bench_plan(name: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    root = folder / name
    shutil.copytree(REPO / "controls", root / "controls")
    began = time.perf_counter()
    plan_path, corpus = throwaway_project(root, name, plan_text(name, args.all_targets))
    targets = sorted({p.mutant.target for p in corpus.pairs})
    print(f"{name}: {len(corpus.pairs)} pairs of {', '.join(targets)}", flush=True)
    report: dict[str, Any] = {
        "plan": name,
        "pairs": len(corpus.pairs),
        "targets": targets,
        "workers": args.workers,
        "draw_seconds": round(time.perf_counter() - began, 1),
    }
    if args.against_published:
        folder_on, rows_on = published(name)
        report["on"] = {"published": str(folder_on.relative_to(REPO)), "pairs": len(rows_on)}
        off = scored(plan_path, args.workers, skip=False)
        report["off"] = {k: v for k, v in off.items() if k != "rows"}
        bad = list(ledger_differences(off["rows"], rows_on))
        report["identical"] = not bad
        report["differing_pairs"] = bad[:20]
        print(
            f"  coverage off: {off['seconds']:7.1f} s against {report['on']['published']}: "
            + ("ledgers IDENTICAL" if not bad else f"ledgers DIFFER in {len(bad)}: {bad[:5]}"),
            flush=True,
        )
        if bad:
            left, right = said(off["rows"]), said(rows_on)
            report["first_difference"] = {"off": left.get(bad[0]), "on": right.get(bad[0])}
        return report
    on = scored(plan_path, args.workers, skip=True)
    line = (
        f"  coverage on:  {on['seconds']:7.1f} s (first row after {on['first_row_seconds']} s), "
        f"{on['pairs_per_second']} pairs/s, load {on['load_average_before']}; "
        f"{on['skipped_by_coverage']} pairs without a worker, {on['reused_runs']} runs reused"
    )
    print(line, flush=True)
    report["on"] = {k: v for k, v in on.items() if k != "rows"}
    if args.only_on:
        return report
    off = scored(plan_path, args.workers, skip=False)
    print(
        f"  coverage off: {off['seconds']:7.1f} s, {off['pairs_per_second']} pairs/s, "
        f"load {off['load_average_before']}",
        flush=True,
    )
    report["off"] = {k: v for k, v in off.items() if k != "rows"}
    report["speed_up"] = round(off["seconds"] / on["seconds"], 2)
    bad = list(ledger_differences(off["rows"], on["rows"]))
    report["identical"] = not bad
    report["differing_pairs"] = bad[:20]
    if bad:
        left, right = said(off["rows"]), said(on["rows"])
        report["first_difference"] = {"off": left.get(bad[0]), "on": right.get(bad[0])}
    print(
        "  ledgers IDENTICAL" if not bad else f"  ledgers DIFFER in {len(bad)}: {bad[:5]}",
        flush=True,
    )
    return report


def markdown(summary: dict[str, Any]) -> str:
    lines = [
        f"# Exhaustive pools, {summary['date']}",
        "",
        f"`{summary['command']}`: every screened candidate of "
        + " and ".join(f"`plans/{r['plan']}.yaml`" for r in summary["plans"])
        + f" on {summary['scope']}, {summary['workers']} "
        + ("worker, " if summary["workers"] == 1 else "workers, ")
        + f"{summary['cpus']} CPUs; "
        + (
            "coverage-guided scoring off, against the published runs (scored with it on)."
            if summary.get("against_published")
            else "coverage-guided scoring on, then off."
            if any("off" in r for r in summary["plans"])
            else "coverage-guided scoring on only (`--only-on`: no identity check)."
        ),
        "",
        "| plan | pairs | on: s | on: pairs/s | off: s | off: pairs/s | speed-up | without a "
        "worker | runs reused | rows |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in summary["plans"]:
        on, off = r["on"], r.get("off", {})
        rows = "identical" if r.get("identical") else ("not compared" if not off else "DIFFER")
        lines.append(
            f"| {r['plan']} | {r['pairs']} | {on.get('seconds', on.get('published', ''))} | "
            f"{on.get('pairs_per_second', '')} | {off.get('seconds', '')} | "
            f"{off.get('pairs_per_second', '')} | {r.get('speed_up', '')} | "
            f"{on.get('skipped_by_coverage', '')} | {on.get('reused_runs', '')} | {rows} |"
        )
    total = (
        ""
        if summary.get("against_published")
        else ("Both pools" if len(summary["plans"]) > 1 else "The pool")
        + f" with coverage on: {summary['on_seconds']} s (target under "
        f"{TARGET_SECONDS:.0f} s on the toy domain and AgentDojo: {summary['target']}). "
    )
    lines += [
        "",
        total
        + "Load average before each run: "
        + "; ".join(
            f"{r['plan']} on {r['on'].get('load_average_before', '(published)')}"
            + (f", off {r['off']['load_average_before']}" if "off" in r else "")
            for r in summary["plans"]
        )
        + ".",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-targets", action="store_true", help="keep the tau2-bench arms")
    parser.add_argument("--plan", choices=PLANS, action="append", help="only this plan (repeat)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only-on", action="store_true", help="skip the run with coverage off")
    parser.add_argument("--keep", type=Path, default=None, help="work in this new folder")
    parser.add_argument(
        "--against-published",
        action="store_true",
        help="coverage off only, compared with the published run of each plan's freeze",
    )
    add_output_options(parser)
    args = parser.parse_args()
    stem = output_stem(
        f"exhaustive-{today()}"
        + ("-all" if args.all_targets else "")
        + ("-against-published" if args.against_published else "")
        + (f"-{args.workers}w" if args.workers != 2 else "")
        + ("-on" if args.only_on else "")
        + "".join(f"-{name}" for name in args.plan or ()),
        args,
    )
    fixed_hash_seed()  # as `harness run`: rows compared with published ones must share it
    if args.against_published and not (args.all_targets and not args.only_on):
        parser.error("--against-published needs --all-targets (the published runs' pools)")
    reports = []
    with tempfile.TemporaryDirectory(prefix="exhaustive-") as tmp:
        folder = Path(tmp) if args.keep is None else args.keep.resolve()
        for name in args.plan or PLANS:
            reports.append(bench_plan(name, args, folder))
    on_seconds = round(sum(r["on"].get("seconds", 0.0) for r in reports), 1)
    met = "met" if on_seconds < TARGET_SECONDS else "missed"
    summary = {
        "date": today(),
        "command": "python bench/exhaustive.py " + " ".join(sys.argv[1:]),
        "scope": "every target" if args.all_targets else "the toy domain and AgentDojo",
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "on_seconds": on_seconds,
        "target": (
            "not applicable (tau2 included)"
            if args.all_targets
            else "not applicable (one plan: the target is for both)"
            if args.plan and len(set(args.plan)) < len(PLANS)
            else met
            if args.workers == 2
            else f"not applicable ({args.workers} worker(s); the target is for 2)"
        ),
        "against_published": args.against_published,
        "plans": reports,
    }
    if not args.against_published:
        print(f"coverage on, in all: {on_seconds} s ({summary['target']})")
    RESULTS.mkdir(parents=True, exist_ok=True)
    Path(f"{stem}.json").write_text(json.dumps(summary, indent=1) + "\n")
    Path(f"{stem}.md").write_text(markdown(summary))
    print(f"wrote {stem.relative_to(REPO)}.json and .md")
    failed = [r["plan"] for r in reports if r.get("identical") is False]
    if failed:
        print(f"FAIL: rows differ with coverage on in {', '.join(failed)}", file=sys.stderr)
        for r in reports:
            if "first_difference" in r:
                print(json.dumps(r["first_difference"], indent=1)[:4000], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What a forked pair child pays for being new: its first scoring of a pair against a second
scoring of the same pair in the same child, in seconds and in page faults.

    python bench/child_faults.py [--targets toy_domain] [--limit 30]

Draws `--limit` mutants a target (the open-world plan of `bench/throughput.py`, with the
recorded calls) in a throwaway project and prepares the run's context in this process as
the local executor does before its first fork (`complete_context`, each mutated package's
function index, `gc.freeze`). Then, per pair, it forks a child (as the runner's, without
its isolation) that scores the pair twice and reports, for each scoring, its seconds and
its minor page faults (`getrusage`). The first scoring pays what every real pair child pays:
each page of the parent's heap it writes to (a reference count is a write) is copied on
first touch. The second, on pages the first already copied, is what the same work costs in
a warm process. Per target family: the mean of each, and the first over the second. Prints
the load average; writes results/bench/child-faults-<date>.json and .md. Runs itself again
under PYTHONHASHSEED=0 unless a seed is set, as `harness` does (`harness.cli.fixed_hash_seed`).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS, add_output_options, load, output_stem, today
from throughput import bench_project

from harness.cli import fixed_hash_seed
from harness.execution.draw import DrawnPair
from harness.execution.pair_scoring import RunContext, complete_context, new_context, score_pair
from harness.execution.plan import load_plan
from harness.mutation.apply import package_functions


def family(target: str) -> str:
    return "toy_domain" if target == "toy_domain" else target.split("-")[0]


def faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def twice_in_a_child(ctx: RunContext, pair: DrawnPair) -> list[tuple[float, int]]:
    """[(seconds, minor faults)] of the first and the second scoring of `pair`, in one
    forked child."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        code = 0
        try:
            measured = []
            for _ in range(2):
                began, before = time.perf_counter(), faults()
                score_pair(ctx, pair)
                measured.append((time.perf_counter() - began, faults() - before))
            os.write(write, json.dumps(measured).encode())
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        data = answer.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        raise SystemExit(f"the child scoring {pair.pair_id} failed (status {status})")
    return [tuple(entry) for entry in json.loads(data)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="toy_domain")
    parser.add_argument("--limit", type=int, default=30, help="mutants a target (seeded)")
    parser.add_argument("--seed", type=int, default=20261130)
    add_output_options(parser)
    args = parser.parse_args()
    out = output_stem(f"child-faults-{today()}", args)
    fixed_hash_seed()
    targets = args.targets.split(",")
    report: dict[str, Any] = {"date": today(), "targets": targets, "limit": args.limit}
    print(f"load average at the start: {load()} on {os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory(prefix="child-faults-") as tmp:
        plan_path, corpus = bench_project(
            Path(tmp) / "project", targets, 1, args.limit, args.seed, recorded=True
        )
        plan = load_plan(plan_path)
        ctx = new_context(plan, "child-faults", True, corpus.liveness, corpus)
        complete_context(ctx, corpus.pairs, None)
        for package in sorted({p.mutant.site.module.partition(".")[0] for p in corpus.pairs}):
            package_functions(package)  # as the local executor does before its first fork
        gc.freeze()
        by_family: dict[str, list[list[tuple[float, int]]]] = {}
        before = load()
        for pair in corpus.pairs:
            by_family.setdefault(family(pair.mutant.target), []).append(twice_in_a_child(ctx, pair))
        report["load"] = [before, load()]
    report["families"] = {}
    for name, runs in sorted(by_family.items()):
        first_s = sum(r[0][0] for r in runs) / len(runs)
        second_s = sum(r[1][0] for r in runs) / len(runs)
        first_f = sum(r[0][1] for r in runs) / len(runs)
        second_f = sum(r[1][1] for r in runs) / len(runs)
        entry = {
            "pairs": len(runs),
            "first_ms": round(first_s * 1000, 1),
            "second_ms": round(second_s * 1000, 1),
            "first_over_second": round(first_s / second_s, 2),
            "first_minor_faults": round(first_f),
            "second_minor_faults": round(second_f),
        }
        report["families"][name] = entry
        print(
            f"  {name:<11} {entry['pairs']:3} pairs: first scoring in a new child "
            f"{entry['first_ms']:7.1f} ms, {entry['first_minor_faults']:6,} minor faults; "
            f"second {entry['second_ms']:7.1f} ms, {entry['second_minor_faults']:6,}; "
            f"first / second {entry['first_over_second']:.2f}",
            flush=True,
        )
    print(f"load {report['load'][0]} -> {report['load'][1]}")
    lines = [
        f"# A new pair child's first scoring against its second ({report['date']})",
        "",
        f"`python bench/child_faults.py --targets {args.targets} --limit {args.limit}`: per "
        f"pair, one forked child scores it twice; means per target family; load "
        f"{report['load'][0]} → {report['load'][1]} on {os.cpu_count()} CPUs.",
        "",
        "| family | pairs | first (ms) | minor faults | second (ms) | minor faults | "
        "first / second |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {name} | {e['pairs']} | {e['first_ms']} | {e['first_minor_faults']:,} | "
            f"{e['second_ms']} | {e['second_minor_faults']:,} | {e['first_over_second']} |"
            for name, e in report["families"].items()
        ),
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    Path(f"{out}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())

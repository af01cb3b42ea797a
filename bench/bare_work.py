"""Where a target's bare work goes: the runs every pair of the target must do, on the
original tools, in one warm process, under cProfile.

    python bench/bare_work.py [--plan plans/open_world_all.yaml] [--target tau2-telecom]
                              [--top 25] [--label NAME]

For each tool of the target that the plan's drawn corpus pairs (its corpus must be drawn:
`harness draw`), in this process: the tool's liveness calls (the corpus's), its grader
replays (`grade` of each grader task calling the tool) and the checker's run, as
`bench/overhead.py` counts a pair's bare work; one untimed pass first, then one under
cProfile. Prints seconds per tool and kind of run, own time by top-level package (which
code the time is spent in: the harness, the benchmark, its libraries), and the functions
with the most cumulative time. Writes results/bench/bare-work-<target>-<date>[-LABEL].json
and .md, with the load average.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import BARE_KINDS, REPO, add_output_options, bare_runs, load, output_stem, today

from harness.cli import fixed_hash_seed
from harness.execution.draw import load_corpus
from harness.execution.freeze import checker_for
from harness.execution.plan import load_plan
from harness.execution.recorded_calls import attach_probes
from harness.targets.registry import load_target


def package(filename: str) -> str:
    """The top-level package a profiled function's file belongs to."""
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins"
    parts = Path(filename).parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].removesuffix(".py")
    if "harness" in parts:
        return "harness"
    return "python"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", type=Path, default=REPO / "plans" / "open_world_all.yaml")
    parser.add_argument("--target", default="tau2-telecom")
    parser.add_argument("--top", type=int, default=25)
    add_output_options(parser)
    args = parser.parse_args()
    stem = output_stem(f"bare-work-{args.target}-{today()}", args)
    fixed_hash_seed()
    plan = load_plan(args.plan)
    corpus = load_corpus(args.plan.resolve().parent.parent, plan)
    tools = sorted({p.tool for p in corpus.pairs if p.mutant.target == args.target})
    if not tools:  # before loading it: an unknown name is one line, not a traceback
        print(
            f"error: {args.plan}: --target: no pair of {args.target!r}; fix: name one of "
            + ", ".join(sorted({p.mutant.target for p in corpus.pairs})),
            file=sys.stderr,
        )
        return 2
    checker = checker_for(plan)
    target = load_target(args.target)
    attach_probes({args.target: target}, corpus.recorded_probes)
    calls = corpus.liveness.get(args.target, {})

    def work() -> dict[str, dict[str, float]]:
        return {tool: bare_runs(target, tool, calls.get(tool, []), checker) for tool in tools}

    load_before = load()
    work()  # untimed: imports, caches, first touches
    profile = cProfile.Profile()
    profile.enable()
    spent = work()
    profile.disable()
    stats = pstats.Stats(profile)
    own: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        own[package(filename)] += tottime
    total_own = sum(own.values())
    kinds = {k: round(sum(s[k] for s in spent.values()), 2) for k in BARE_KINDS}
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(args.top)
    lines = [
        f"load average {load_before} before, {load()} after, on {os.cpu_count()} CPUs",
        f"{args.target}: {len(tools)} tools of {args.plan.name}'s pairs; seconds under cProfile "
        + ", ".join(f"{k} {v}" for k, v in kinds.items()),
        "",
        f"{'tool':<32} " + " ".join(f"{k:>9}" for k in BARE_KINDS),
    ]
    lines += [f"{t:<32} " + " ".join(f"{s[k]:9.3f}" for k in BARE_KINDS) for t, s in spent.items()]
    lines += ["", "own time by package:"]
    lines += [
        f"  {name:<20} {seconds:8.2f} s {seconds / total_own:6.1%}"
        for name, seconds in sorted(own.items(), key=lambda item: -item[1])
        if seconds / total_own >= 0.005
    ]
    lines += ["", "most cumulative time:", *text.getvalue().strip().splitlines()[-(args.top + 1) :]]
    print("\n".join(lines))
    command = f"python bench/bare_work.py --plan {args.plan} --target {args.target}"
    Path(f"{stem}.md").write_text(
        f"# bench/bare_work.py, {today()}\n\n`{command}`\n\n```\n" + "\n".join(lines) + "\n```\n"
    )
    report: dict[str, Any] = {
        "date": today(),
        "command": command,
        "load": [load_before, load()],
        "seconds_by_kind": kinds,
        # microseconds: a toy tool's liveness calls can take under half a millisecond
        "seconds_by_tool": {t: {k: round(v, 6) for k, v in s.items()} for t, s in spent.items()},
        "own_seconds_by_package": {k: round(v, 2) for k, v in own.items()},
    }
    Path(f"{stem}.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {stem}.md and .json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Bare checker time per tool, an older reference checker against this one, on ORIGINAL tools.

    python bench/checker_time.py [--old REV] [--targets T ...] [--repeat N] [--old-recorded]

In one sitting: the harness package of git revision REV (default: the last commit whose
reference checker is 1.2.0) is extracted to a temporary folder, and one child process per
checker loads each target (default: the three tau2 domains) and compiles its contracts
once, then times `check(target, [tool])` on request; the parent asks the children in turn,
tool by tool, REPEAT rounds (default 3), and keeps each one's minimum. The new checker is
timed twice: bare (fresh-environment probes only, as `harness check` without --corpus)
and with the probe half of the target's recorded-call corpus (corpora/, split seed 0);
with --old-recorded the old checker is timed with that corpus too (a checker of 1.3.0 or
later, which probes recorded pre-states: what the exhaustive pools run), and the ratio
old/new is printed for the recorded runs as well. Only original tools are checked; no
mutant, plan or ledger is touched. Prints one line per tool and the ratio old/new per
target (geometric mean over tools, and total over total), then each child's peak RSS once
its targets are loaded and after its last check (what the checker's memos came to hold);
the machine may be shared, so only the ratios of this sitting mean anything.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

from common import REPO, TAU2, LineChild, extract

OLD_REV = "69c95e2"  # the adapter protocol commit: reference checker 1.2.0

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import harness
from harness.checker import REFERENCE_VERSION, ReferenceChecker, compile_target
from harness.targets.registry import load_target

targets, corpus = json.loads(sys.argv[1]), sys.argv[2]
loaded = {}
for name in targets:
    target = load_target(name)
    if corpus:
        from harness.targets.recorded import attach_probe_half
        attach_probe_half(target, Path(corpus), 0)
    target.adapter.fresh()
    compile_target(target)
    loaded[name] = target
checker = ReferenceChecker()
tools = {name: sorted(t.contracts) for name, t in loaded.items()}
def peak():  # MiB: the most this process has held, as ru_maxrss counts it (KiB on Linux)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
meta = {"version": REFERENCE_VERSION, "package": harness.__file__, "tools": tools}
print(json.dumps(meta | {"peak_mib": peak()}))
sys.stdout.flush()
for line in sys.stdin:  # one "target tool" per line: check it once, answer the seconds
    name, tool = line.split()
    began = time.perf_counter()
    checker.check(loaded[name], [tool])
    print(time.perf_counter() - began)
    sys.stdout.flush()
print(json.dumps({"peak_mib": peak()}))  # after every check: what the checker's memos hold
"""


class Child(LineChild):
    """One checker in its own process, timing one tool check per request."""

    def __init__(self, targets: list[str], path: Path | None, corpus: str):
        super().__init__(CHILD, [json.dumps(targets), corpus], path, "checker child")
        self.peak_after: float | None = None

    def seconds(self, target: str, tool: str) -> float:
        return float(self.ask(f"{target} {tool}"))

    def close(self) -> None:
        """End the child, keeping its peak memory after every check (`peak_after`)."""
        self.end()
        self.peak_after = json.loads(self.line())["peak_mib"]
        self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default=OLD_REV)
    parser.add_argument("--targets", nargs="+", default=list(TAU2))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--old-recorded", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        old = Child(args.targets, extract(args.old, Path(folder)), "")
        new = Child(args.targets, None, "")
        corpus = str(REPO / "corpora")
        recorded = Child(args.targets, None, corpus)
        children = [old, new, recorded]
        if args.old_recorded:
            children.append(Child(args.targets, Path(folder), corpus))
        if old.meta["version"] == new.meta["version"]:
            sys.exit(f"both children run checker {old.meta['version']} ({old.meta['package']})")
        # interleaved, tool by tool and round by round, so a change of the machine's load
        # falls on all three alike; the minimum of the rounds is kept
        best: dict[str, list[float]] = {}
        for target in args.targets:
            for tool in old.meta["tools"][target]:
                key = f"{target}:{tool}"
                best[key] = [float("inf")] * len(children)
                for _ in range(args.repeat):
                    for index, child in enumerate(children):
                        best[key][index] = min(best[key][index], child.seconds(target, tool))
        for child in children:
            child.close()
    print(
        f"old: reference {old.meta['version']} ({args.old}); new: reference "
        f"{new.meta['version']}; minimum of {args.repeat} interleaved rounds"
    )
    extra = f" {'old+rec s':>10} {'old/new rec':>11}" if args.old_recorded else ""
    print(f"{'target:tool':58} {'old s':>8} {'new s':>8} {'old/new':>8} {'+recorded s':>12}{extra}")
    for target in args.targets:
        keys = [k for k in best if k.startswith(f"{target}:")]
        for key in keys:
            o, n, r = best[key][:3]
            line = f"{key:58} {o:8.3f} {n:8.3f} {o / n:8.2f} {r:12.3f}"
            if args.old_recorded:
                line += f" {best[key][3]:10.3f} {best[key][3] / r:11.2f}"
            print(line)
        ratios = [best[k][0] / best[k][1] for k in keys]
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        total_old, total_new, total_rec = (sum(best[k][i] for k in keys) for i in range(3))
        print(
            f"{target}: {len(keys)} tools; old/new per tool (geometric mean) {geo:.2f}; "
            f"total old {total_old:.2f} s, new {total_new:.2f} s ({total_old / total_new:.2f}x), "
            f"new with recorded probes {total_rec:.2f} s "
            f"(old/recorded {total_old / total_rec:.2f}x)"
        )
        if args.old_recorded:
            rec = [best[k][3] / best[k][2] for k in keys]
            total_old_rec = sum(best[k][3] for k in keys)
            print(
                f"{target}: with recorded probes, old/new per tool (geometric mean) "
                f"{math.exp(sum(map(math.log, rec)) / len(rec)):.2f}; total old "
                f"{total_old_rec:.2f} s, new {total_rec:.2f} s ({total_old_rec / total_rec:.2f}x)"
            )
    names = ["old", "new", "new with recorded probes", "old with recorded probes"]
    print(
        "peak RSS of each checker's process (MiB), targets loaded -> after every check: "
        + ", ".join(
            f"{name} {child.meta['peak_mib']:.0f} -> {child.peak_after:.0f}"
            for name, child in zip(names, children, strict=False)
        )
    )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

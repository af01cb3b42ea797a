"""Pair time, an older harness against a newer one, side by side: the same pairs scored by
both in one sitting.

    python bench/pair_time.py --old REV [--new REV] [--plan plans/open_world_all.yaml]
                              [--run RUN_DIR] [--per-target 6] [--targets T ...]
                              [--repeat 2] [--seed 0] [--label NAME]

The harness packages of git revisions `--old` and `--new` (default HEAD: commit what you
measure) are each extracted to a temporary folder, as `bench/checker_time.py` extracts
its old one, and two child processes, one per harness, each load the plan's targets and
drawn corpus and prepare a context for the same pairs (baselines, liveness observations,
grades; coverage-guided scoring off, so every run of a pair runs). The pairs are a seeded
sample of `--per-target` pairs of each target among those the published `--run` (by
default the plan's frozen run, results/reference/PLAN/FREEZE_ID) scored `detected` or
`missed` (no crash, no timeout). Then, pair by pair and round by round, the parent asks
each child in turn (the order alternating) to score the pair in a forked child of its
own, as the runner's child does without its isolation, and keeps each one's minimum.
The child started first scores some 5 % slower, whichever harness it runs (measured with
one revision on both sides), so the rounds come in two halves of `--repeat` each, with
new children started the other way round in the second. Prints, per target and per
family, the seconds of old and new and their ratio (total over total, and the geometric
mean of the pairs' ratios), and whether every pair's score (the row but its timing) is the
same from both; the load average at the start and the end. With one revision on both
sides the ratios are 1.00 within the noise. The machine may be shared, so only the ratios
of this sitting mean anything. Writes results/bench/pair-time-<date>[-LABEL].json and
.md.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import (
    REPO,
    LineChild,
    add_output_options,
    extract,
    head_commit,
    load,
    output_stem,
    repository_plan,
    today,
)
from overhead import family

CHILD = r"""
import gc, json, os, sys, time
from pathlib import Path
import harness
from harness.checker import REFERENCE_VERSION
from harness.execution.draw import load_corpus
from harness.execution.pair_scoring import complete_context, new_context, score_pair
from harness.execution.plan import load_plan

root, plan_path, wanted = Path(sys.argv[1]), Path(sys.argv[2]), set(json.loads(sys.argv[3]))
plan = load_plan(plan_path)
corpus = load_corpus(root, plan)
pairs = {p.pair_id: p for p in corpus.pairs if p.pair_id in wanted}
ctx = new_context(plan, "bench", True, corpus.liveness, corpus)
complete_context(ctx, list(pairs.values()), None)
gc.collect()
gc.freeze()  # as the local executor does before it forks (`executors.score_pairs`)
print(json.dumps({"version": REFERENCE_VERSION, "package": harness.__file__}), flush=True)
for line in sys.stdin:  # one pair id a line: score it in a forked child, answer seconds and score
    pair = pairs[line.strip()]
    read, write = os.pipe()
    began = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            out = score_pair(ctx, pair).model_dump_json()
        except BaseException as exc:
            out = json.dumps({"raised": type(exc).__name__})
        with os.fdopen(write, "w") as stream:
            stream.write(out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as stream:
        score = json.loads(stream.read())
    os.waitpid(pid, 0)
    print(json.dumps({"seconds": time.perf_counter() - began, "score": score}), flush=True)
"""


class Child(LineChild):
    """One harness in its own process, scoring one pair per request."""

    def __init__(self, plan: Path, ids: list[str], path: Path):
        # quiet: its stderr is the set-up's progress lines
        super().__init__(
            CHILD, [str(REPO), str(plan), json.dumps(ids)], path, "scoring child", True
        )

    def score(self, pair_id: str) -> tuple[float, Any]:
        answer = json.loads(self.ask(pair_id))
        return answer["seconds"], answer["score"]

    def close(self) -> None:
        self.end()
        self.process.wait()


def sample(run: Path, per_target: int, targets: list[str] | None, seed: int) -> dict[str, str]:
    """Seeded pair ids, `per_target` of each target, among the run's detected or missed:
    pair id -> target."""
    by_target: dict[str, list[str]] = {}
    with (run / "ledger.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            if row["status"] in ("detected", "missed") and (
                not targets or row["target"] in targets
            ):
                by_target.setdefault(row["target"], []).append(row["pair_id"])
    rng = random.Random(seed)
    return {
        pair_id: target
        for target in sorted(by_target)
        for pair_id in rng.sample(
            sorted(by_target[target]), min(per_target, len(by_target[target]))
        )
    }


def ratios(times: list[tuple[float, float]]) -> dict[str, float]:
    old, new = sum(t[0] for t in times), sum(t[1] for t in times)
    geo = math.exp(sum(math.log(o / n) for o, n in times) / len(times))
    return {
        "pairs": len(times),
        "old_s": round(old, 3),
        "new_s": round(new, 3),
        "old_over_new": round(old / new, 3),
        "geometric_mean": round(geo, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="the git revision of the older harness")
    parser.add_argument("--new", default="HEAD", help="the git revision of the newer harness")
    parser.add_argument("--plan", type=Path, default=REPO / "plans" / "open_world_all.yaml")
    parser.add_argument(
        "--run", type=Path, help="a published run of the plan (default: its frozen one)"
    )
    parser.add_argument("--per-target", type=int, default=6)
    parser.add_argument("--targets", nargs="+")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    add_output_options(parser)
    args = parser.parse_args()
    stem = output_stem(f"pair-time-{today()}", args)
    plan, _, freeze_id = repository_plan(args.plan)
    run = args.run or REPO / "results" / "reference" / plan.stem / freeze_id
    if not (run / "ledger.jsonl").is_file():
        print(
            f"error: {run}: no ledger.jsonl (the plan's freeze is not published?); "
            "fix: pass --run with a published run of the plan",
            file=sys.stderr,
        )
        return 2
    for option, rev in (("--old", args.old), ("--new", args.new)):
        if not head_commit(rev):
            print(
                f"error: {option}: {rev!r} is no commit of this repository; "
                "fix: give a revision git log shows",
                file=sys.stderr,
            )
            return 2
    began = load()
    print(f"load average at start: {began}", flush=True)
    target_of = sample(run, args.per_target, args.targets, args.seed)
    ids = list(target_of)
    print(
        f"{len(ids)} pairs of {run.relative_to(REPO) if run.is_relative_to(REPO) else run}",
        flush=True,
    )
    best = {pair_id: [math.inf, math.inf] for pair_id in ids}
    same: dict[str, bool] = {}
    meta: list[dict[str, Any]] = [{}, {}]
    with tempfile.TemporaryDirectory() as folder:
        paths = [
            extract(rev, Path(folder) / side)
            for side, rev in (("old", args.old), ("new", args.new))
        ]
        # the child started first is slower (the module's docstring): each half starts the
        # two the other way round, and a pair keeps its minimum over both halves
        for half in (0, 1):  # the half's first child is slot `half`
            children: list[Child | None] = [None, None]
            for slot in (half, 1 - half):
                children[slot] = Child(plan, ids, paths[slot])
            old, new = children[0], children[1]
            assert old is not None and new is not None
            meta = [old.meta, new.meta]
            for round_ in range(args.repeat):
                for index, pair_id in enumerate(ids):
                    order = (
                        [(0, old), (1, new)]
                        if (index + round_ + half) % 2 == 0
                        else [(1, new), (0, old)]
                    )
                    scores = {}
                    for slot, child in order:
                        seconds, scores[slot] = child.score(pair_id)
                        best[pair_id][slot] = min(best[pair_id][slot], seconds)
                    same[pair_id] = same.get(pair_id, True) and scores[0] == scores[1]
            old.close()
            new.close()
    report: dict[str, Any] = {
        "date": today(),
        "old": {"rev": args.old, "checker": meta[0]["version"]},
        "new": {"rev": args.new, "checker": meta[1]["version"]},
        "run": str(run.relative_to(REPO) if run.is_relative_to(REPO) else run),
        "repeat": args.repeat,
        "load": [began],
        "same_scores": sum(same.values()),
        "pairs": len(ids),
        "targets": {},
        "families": {},
    }
    groups: dict[str, dict[str, list[tuple[float, float]]]] = {"targets": {}, "families": {}}
    for pair_id, (o, n) in best.items():
        groups["targets"].setdefault(target_of[pair_id], []).append((o, n))
        groups["families"].setdefault(family(target_of[pair_id]), []).append((o, n))
    lines = [
        f"old: harness of {args.old} (checker {meta[0]['version']}); new: harness of "
        f"{args.new} (checker {meta[1]['version']}); minimum of 2 x {args.repeat} interleaved "
        "rounds, the two children started the other way round in the second half",
        f"{'':24} {'pairs':>5} {'old s':>8} {'new s':>8} {'old/new':>8} {'geo mean':>9}",
    ]
    for kind in ("targets", "families"):
        for name, times in sorted(groups[kind].items()):
            entry = report[kind][name] = ratios(times)
            lines.append(
                f"{name:24} {entry['pairs']:5} {entry['old_s']:8.3f} {entry['new_s']:8.3f} "
                f"{entry['old_over_new']:8.2f} {entry['geometric_mean']:9.2f}"
            )
    entry = report["all"] = ratios(list(best.values()))
    lines.append(
        f"{'all':24} {entry['pairs']:5} {entry['old_s']:8.3f} {entry['new_s']:8.3f} "
        f"{entry['old_over_new']:8.2f} {entry['geometric_mean']:9.2f}"
    )
    lines.append(f"scores the same, old and new: {report['same_scores']} of {len(ids)} pairs")
    ended = load()
    report["load"].append(ended)
    lines.append(f"load average at end: {ended}")
    print("\n".join(lines))
    Path(f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    command = "python3 bench/pair_time.py " + " ".join(sys.argv[1:])
    Path(f"{stem}.md").write_text(
        f"# bench/pair_time.py, {today()}\n\n`{command}`\n\n```\nload average at start: {began}\n"
        + "\n".join(lines)
        + "\n```\n",
        encoding="utf-8",
    )
    print(f"wrote {stem}.json and .md")
    return 0 if report["same_scores"] == len(ids) else 1


if __name__ == "__main__":
    sys.exit(main())

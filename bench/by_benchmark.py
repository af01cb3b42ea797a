"""Closed-world recall and misses by cause per benchmark, and open-world escapes per
benchmark, of one or more run folders, from their ledgers alone.

    python bench/by_benchmark.py RUN_DIR [RUN_DIR ...]

A benchmark is the name before the first `-` of a target (agentdojo, bfcl, tau2; the toy
domain its own). `real w/o bfcl` is the real targets the 1.2.0 runs had, for a comparison
of a run that adds BFCL with one that did not. Open-world escapes (live pairs missed) are
split by miss cause too. With two run folders (old, then new), also the open-world pairs
both share, pair for pair per scope and benchmark (`harness.analysis.paired.paired_frames`,
as `better_than`'s table): detected by both, only by the new, only by the old, by neither,
with McNemar's exact p on the discordant pairs; descriptive, since no plan predicts it (the
closed-world pairs have `better_than` and its table, tables/paired.md). Prints Markdown.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from harness.analysis import load_ledger
from harness.analysis.paired import paired_frames

CAUSES = ("unreached", "probe_unrevealing", "no_clause", "checker_crash")


def _closed(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    real = frame[frame["bench"] != "toy_domain"]
    groups = [(str(b), g) for b, g in frame.groupby("bench")]
    return [*groups, ("real", real), ("real w/o bfcl", real[real["bench"] != "bfcl"])]


def report(run: Path) -> str:
    df = load_ledger(run)
    df = df.assign(bench=df["target"].astype(str).str.split("-").str[0])
    out = [f"### {run}", ""]
    cw = df[(df["arm_kind"] == "closed_world") & df["in_n"]]
    if len(cw):
        out += [
            "| closed world | detected | n | recall | missed | " + " | ".join(CAUSES) + " |",
            "|---|---:|---:|---:|---:|" + "---:|" * len(CAUSES),
        ]
        for name, g in _closed(cw):
            if not len(g):
                continue
            missed = g[g["status"].astype(str) == "missed"]
            causes = missed["miss_cause"].astype(str).value_counts()
            det = int(g["detected"].sum())
            out.append(
                f"| {name} | {det} | {len(g)} | {det / len(g):.3f} | {len(missed)} | "
                + " | ".join(str(int(causes.get(c, 0))) for c in CAUSES)
                + " |"
            )
        out.append("")
    ow = df[df["arm_kind"] == "open_world"]
    if len(ow):
        head = "| open world | pairs | live | escapes | escape rate | "
        out += [head + " | ".join(CAUSES) + " |"]
        out += ["|---|---:|---:|---:|---:|" + "---:|" * len(CAUSES)]
        for name, g in ow.groupby("bench"):
            live = g[g["live"].fillna(False).astype(bool)]
            escaped = live[live["status"].astype(str) == "missed"]
            causes = escaped["miss_cause"].astype(str).value_counts()
            rate = f"{len(escaped) / len(live):.3f}" if len(live) else "—"
            out.append(
                f"| {name} | {len(g)} | {len(live)} | {len(escaped)} | {rate} | "
                + " | ".join(str(int(causes.get(c, 0))) for c in CAUSES)
                + " |"
            )
        out.append("")
    return "\n".join(out)


def open_world_paired(old: Path, new: Path) -> str:
    """Open-world pairs both runs share, detected or not, per scope and benchmark."""
    tables = paired_frames(load_ledger(new), load_ledger(old), arm_kind="open_world")
    if not tables[-1].n:
        return ""
    out = [
        f"### open-world pairs shared by {old} (old) and {new} (new)",
        "",
        "| scope | shared | both | only new | only old | neither | McNemar exact p |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in tables:
        p = t.mcnemar_p
        out.append(
            f"| {t.scope} | {t.n} | {t.both} | {t.only_new} | {t.only_old} | {t.neither} | "
            f"{'—' if p is None else f'{p:.2g}'} |"
        )
    return "\n".join([*out, ""])


def main() -> int:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = [Path(arg) for arg in sys.argv[1:]]
    print("\n".join(report(run) for run in runs))
    if len(runs) == 2:
        print(open_world_paired(*runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

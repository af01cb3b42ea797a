"""Closed-world recall and misses by cause per benchmark, and open-world escapes per
benchmark, of one or more run folders, from their ledgers alone.

    python bench/by_benchmark.py RUN_DIR [RUN_DIR ...]

A benchmark is the name before the first `-` of a target (agentdojo, bfcl, tau2; the toy
domain its own). `real w/o bfcl` is the real targets the 1.2.0 runs had, for a comparison
of a run that adds BFCL with one that did not. Prints Markdown.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from harness.analysis import load_ledger

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
        out += ["| open world | pairs | live | escapes | escape rate |"]
        out += ["|---|---:|---:|---:|---:|"]
        for name, g in ow.groupby("bench"):
            live = g[g["live"].fillna(False).astype(bool)]
            escapes = int((live["status"].astype(str) == "missed").sum())
            rate = f"{escapes / len(live):.3f}" if len(live) else "—"
            out.append(f"| {name} | {len(g)} | {len(live)} | {escapes} | {rate} |")
        out.append("")
    return "\n".join(out)


def main() -> int:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("\n".join(report(Path(arg)) for arg in sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What one check holds in the reference checker's table and harvest memos (checker 1.5.1's
bounds, harness/checker/probes.py), tool by tool, on ORIGINAL tools.

    python bench/checker_memos.py [--targets tau2-airline tau2-retail tau2-telecom]
                                  [--no-recorded] [--label NAME]

For each tool of each target (with the probe half of the target's recorded-call corpus, as
the pools check, unless --no-recorded): the memos emptied and their bounds lifted, one
`check(target, [tool])`, then the items each memo holds (`_held`: records pinned and values
harvested) and how many entries. A bound must sit well above the largest: a memo emptied
within one check harvests again what it just harvested. Prints one line per tool, the
largest per target and overall, and the bounds in force; writes
results/bench/checker-memos-<date>[-LABEL].json and .md, with the load average.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from common import REPO, TAU2, add_output_options, load, output_stem, today

from harness.checker import REFERENCE_VERSION, ReferenceChecker, compile_target, probes
from harness.targets.recorded import attach_probe_half
from harness.targets.registry import load_target


def _emptied() -> None:
    probes._TABLES.clear()
    probes._HARVESTS.clear()
    probes._held.update(tables=0, harvests=0)


def _most(rows: list[dict[str, Any]], items: str, entries: str, noun: str) -> str:
    top = max(rows, key=lambda r: r[items])
    if not top[items]:
        return "0 items (no check used the memo)"
    return f"{top[items]:,} items ({top['target']}:{top['tool']}, {top[entries]} {noun})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=list(TAU2))
    parser.add_argument("--no-recorded", action="store_true", help="fresh-environment probes only")
    add_output_options(parser)
    args = parser.parse_args()
    stem = output_stem(f"checker-memos-{today()}", args)
    bounds = {"tables": probes._TABLE_ITEMS, "harvests": probes._HARVEST_ITEMS}
    began = load()
    print(f"load average at start: {began}; reference checker {REFERENCE_VERSION}", flush=True)
    probes._TABLE_ITEMS = probes._HARVEST_ITEMS = sys.maxsize  # what one check would hold
    checker = ReferenceChecker()
    rows = []
    for name in args.targets:
        target = load_target(name)
        if not args.no_recorded:
            attach_probe_half(target, REPO / "corpora", 0)
        target.adapter.fresh()
        compile_target(target)
        for tool in sorted(target.contracts):
            _emptied()
            checker.check(target, [tool])
            row = {
                "target": name,
                "tool": tool,
                "table_items": probes._held["tables"],
                "table_keys": len(probes._TABLES),
                "harvest_items": probes._held["harvests"],
                "harvests": len(probes._HARVESTS),
            }
            rows.append(row)
            print(
                f"{name}:{tool:<40} tables {row['table_items']:>9,} items "
                f"({row['table_keys']} key sets)  harvests {row['harvest_items']:>9,} items "
                f"({row['harvests']})",
                flush=True,
            )
    _emptied()
    lines = []
    for name in [*args.targets, None]:
        of = [r for r in rows if name is None or r["target"] == name]
        if not of:
            continue
        lines.append(
            f"{name or 'every target'}: the most one check held: tables "
            f"{_most(of, 'table_items', 'table_keys', 'key sets')}, harvests "
            f"{_most(of, 'harvest_items', 'harvests', 'harvests')}"
        )
    lines.append(
        f"bounds in force: tables {bounds['tables']:,} items, harvests {bounds['harvests']:,} items"
    )
    ended = load()
    lines.append(f"load average at end: {ended}")
    print("\n".join(lines))
    command = "python bench/checker_memos.py " + " ".join(sys.argv[1:])
    report = {"version": REFERENCE_VERSION, "bounds": bounds, "rows": rows, "load": [began, ended]}
    Path(f"{stem}.json").write_text(json.dumps(report, indent=1) + "\n")
    table = [
        "| target:tool | table items | key sets | harvest items | harvests |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(
            f"| {r['target']}:{r['tool']} | {r['table_items']:,} | {r['table_keys']} | "
            f"{r['harvest_items']:,} | {r['harvests']} |"
            for r in rows
        ),
    ]
    Path(f"{stem}.md").write_text(
        f"# Checker memos per check, reference checker {REFERENCE_VERSION} ({today()})\n\n"
        f"`{command.strip()}`\n\n" + "\n".join(table) + "\n\n" + "\n".join(lines) + "\n"
    )
    print(f"wrote {stem}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())

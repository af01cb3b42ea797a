"""Two runs of the same drawn pairs, row for row: the identity check of a refreeze.

    python bench/same_rows.py OLD_RUN_DIR NEW_RUN_DIR

A refreeze that changes only how pairs are scored (the executor, the set-up, the freeze's own
bookkeeping) must give every pair the row it had: same status, verdicts, miss cause, grader
and liveness fields. Compares `LedgerRow.comparable()` of both ledgers (timing, how a row was
obtained and the freeze id aside) and prints the count of pairs in each, how many are
identical, and every differing pair with the fields that differ. Exit 1 when any pair differs
or is in one ledger only (a run still going is a difference: finish it first).

Then, apart (it decides no exit code: coverage-guided scoring on and off obtain the same rows
differently), how each row was obtained: on how many pairs in both the two runs agree on
`skipped_by_coverage` and `reused_runs`, on how many pairs each run reused some runs, and
how many it scored from the original alone. A refreeze that changes how reuse is worked out
(not whether it is used) must obtain every row the same way.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common import ledger_differences

from harness.execution.ledger import LedgerRow, read_rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="a run folder (holds ledger.jsonl)")
    parser.add_argument("new", type=Path, help="a run folder of the same drawn pairs")
    args = parser.parse_args(argv)
    rows = []
    for folder in (args.old, args.new):
        ledger = folder / "ledger.jsonl"
        if not ledger.is_file():
            print(f"{ledger}: no ledger; give a run folder", file=sys.stderr)
            return 2
        rows.append(list(read_rows(ledger)))
    old, new = rows
    differences = ledger_differences(old, new)
    both = {r.pair_id for r in old} & {r.pair_id for r in new}
    print(f"{args.old}: {len(old)} pairs; {args.new}: {len(new)} pairs")
    print(f"in both: {len(both)}, identical: {len(both - differences.keys())}")
    for pair_id, how in differences.items():
        print(f"  {pair_id}: {how}")
    print("IDENTICAL" if not differences else f"DIFFERENT: {len(differences)} pairs")
    print(how_obtained(old, new, both))
    return 1 if differences else 0


def how_obtained(old: list[LedgerRow], new: list[LedgerRow], both: set[str]) -> str:
    """One line: on how many of the pairs in `both` the two runs obtained the row the same
    way, then per run the pairs with reused runs and those scored from the original alone."""
    ways = [
        {r.pair_id: (r.skipped_by_coverage, r.reused_runs) for r in rows} for rows in (old, new)
    ]
    same = sum(ways[0][pair_id] == ways[1][pair_id] for pair_id in both)
    each = [
        f"{sum(n > 0 for _, n in way.values())} with reused runs, "
        f"{sum(skipped for skipped, _ in way.values())} from the original alone"
        for way in ways
    ]
    return f"obtained the same way: {same} of {len(both)}; old: {each[0]}; new: {each[1]}"


if __name__ == "__main__":
    sys.exit(main())

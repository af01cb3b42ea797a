"""BFCL is held out (issue 26): no committed ledger may hold a BFCL pair, so that the next
checker freeze registers its BFCL predictions before any BFCL pair exists. The
recorded-calls issue relaxes this to "unless a plan declaring BFCL held out was frozen and
committed first"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HELD_OUT_PREFIX = "bfcl"


def committed_ledgers(root: Path) -> list[Path]:
    """Every tracked file named ledger.jsonl, and every tracked .jsonl under results/."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*ledger.jsonl", "results/*.jsonl"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(root / name for name in listed.split("\0") if name)


def held_out_pairs(path: Path, prefix: str = HELD_OUT_PREFIX) -> list[str]:
    """The pairs of `path` (rows with a `pair_id`) whose target starts with `prefix`."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row, dict) or "pair_id" not in row:
            continue
        target = row.get("target") or (row.get("mutant") or {}).get("target") or ""
        if str(target).startswith(prefix):
            found.append(f"{path.name}:{number}: {row['pair_id']} ({target})")
    return found


def test_no_committed_ledger_holds_a_bfcl_pair() -> None:
    try:
        ledgers = committed_ledgers(ROOT)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: nothing is committed here")
    assert ledgers, "the repository commits ledgers: git ls-files found none"
    found = [hit for path in ledgers for hit in held_out_pairs(path)]
    assert found == [], f"BFCL is held out, yet committed ledgers hold its pairs: {found}"


def test_the_check_sees_a_bfcl_pair(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    rows = [
        {"pair_id": "a:transfer", "target": "toy_domain"},
        {"pair_id": "b:mkdir", "target": "bfcl-file-system"},
        {"tool": "mkdir", "target": "bfcl-file-system"},  # a baseline row: no pair
    ]
    ledger.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert held_out_pairs(ledger) == ["ledger.jsonl:2: b:mkdir (bfcl-file-system)"]

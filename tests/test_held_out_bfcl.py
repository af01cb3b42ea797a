"""BFCL is held out (issue 26): no committed ledger may hold a BFCL pair unless a plan
declaring that BFCL target held out was frozen and committed first (issue 27), so that a
checker freeze registers its BFCL predictions before any BFCL pair exists."""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml

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


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout


@cache  # asked once per committed BFCL pair's commit: the history is read once per target
def held_out_freezes(target: str) -> list[str]:
    """Commits that committed the freeze record of a plan declaring `target` held out (the
    plan as it stood in that commit), oldest first."""
    found = []
    for commit in _git("log", "--reverse", "--format=%H", "--", "plans/*.freeze.json").split():
        changed = _git("show", "--name-only", "--format=", commit, "--", "plans/*.freeze.json")
        for record in changed.split():
            plan_file = record.removesuffix(".freeze.json") + ".yaml"
            shown = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{commit}:{plan_file}"],
                capture_output=True,
                text=True,
                check=False,
            )
            if shown.returncode == 0 and target in (yaml.safe_load(shown.stdout) or {}).get(
                "held_out", []
            ):
                found.append(commit)
    return found


def test_no_committed_ledger_holds_a_bfcl_pair_before_a_held_out_freeze() -> None:
    try:
        ledgers = committed_ledgers(ROOT)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: nothing is committed here")
    assert ledgers, "the repository commits ledgers: git ls-files found none"
    # every commit that added a BFCL pair to a ledger, from the history itself
    from harness.execution.held_out import held_out_pairs as committed_pairs
    from harness.targets.registry import BUILTIN_TARGETS

    bfcl = sorted(t for t in BUILTIN_TARGETS if t.startswith(HELD_OUT_PREFIX))
    for commit, path, target in committed_pairs(ROOT, bfcl, "HEAD"):
        freezes = held_out_freezes(target)
        assert any(
            f != commit
            and subprocess.run(
                ["git", "-C", str(ROOT), "merge-base", "--is-ancestor", f, commit],
                check=False,
            ).returncode
            == 0
            for f in freezes
        ), (
            f"commit {commit} added a pair of held-out {target} ({path}) before any freeze "
            f"of a plan declaring it held out (such freezes: {freezes or 'none'})"
        )


def test_the_check_sees_a_bfcl_pair(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    rows = [
        {"pair_id": "a:transfer", "target": "toy_domain"},
        {"pair_id": "b:mkdir", "target": "bfcl-file-system"},
        {"tool": "mkdir", "target": "bfcl-file-system"},  # a baseline row: no pair
    ]
    ledger.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert held_out_pairs(ledger) == ["ledger.jsonl:2: b:mkdir (bfcl-file-system)"]

"""Held-out targets, verified from git history: how a checker is measured blind.

A plan's `held_out:` names targets on which no committed ledger of the repository holds a
pair. `harness freeze` checks the history of HEAD (the freeze commit will follow it), and
`harness publish` the history of the run's freeze commit: a commit that added a pair of a
held-out target to any `*ledger.jsonl` file, or any JSONL file under `results/`, refuses the
command, naming the commit and the file. Rows are found by git's diff search (`git log -G`)
and then read from the commit itself, so a row counts only when it parses, is a pair (has a
`pair_id`) and names the target (or its mutant does).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from harness.errors import Problem, UserError
from harness.execution.history import toplevel

# ledgers by name anywhere, and any JSONL under results/ (a row counts only when it is a
# pair: it has a pair_id, so baseline and score-at-risk rows never do)
LEDGER_PATHSPECS = (":(glob)**/*ledger.jsonl", ":(glob)results/**/*.jsonl")


def _git(top: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(top), *args], capture_output=True, text=True, check=False
    )


def held_out_pairs(root: Path, targets: list[str], upto: str) -> list[tuple[str, str, str]]:
    """(commit, ledger path, target) for every commit in the history of `upto` that added a
    row of one of `targets` to a committed ledger, oldest first."""
    top = toplevel(root)
    if top is None or not targets:
        return []
    if _git(top, "rev-parse", "--verify", "-q", f"{upto}^{{commit}}").returncode != 0:
        return []  # an empty repository: no ledger was ever committed
    names = "|".join(re.escape(t) for t in sorted(targets))
    log = _git(
        top,
        "log",
        "--reverse",
        "--format=@%H",
        "--name-only",
        f'-G"target": ?"({names})"',
        upto,
        "--",
        *LEDGER_PATHSPECS,
    )
    found: list[tuple[str, str, str]] = []
    commit = ""
    for line in log.stdout.splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line.strip():
            target = _row_target(top, commit, line.strip(), set(targets))
            if target is not None:
                found.append((commit, line.strip(), target))
    return found


def _row_target(top: Path, commit: str, path: str, targets: set[str]) -> str | None:
    shown = _git(top, "show", f"{commit}:{path}")
    for line in shown.stdout.splitlines() if shown.returncode == 0 else []:
        try:
            row = json.loads(line)
            target = row.get("target") or (row.get("mutant") or {}).get("target")
        except (ValueError, AttributeError):
            continue
        if target in targets and "pair_id" in row:
            return target
    return None


def check_held_out(root: Path, plan_file: str, targets: list[str], upto: str, when: str) -> None:
    """Raise unless no committed ledger in the history of `upto` holds a pair of `targets`."""
    if not targets:
        return
    if toplevel(root) is None:
        raise UserError(
            Problem(
                plan_file,
                "held_out",
                "the project is not in a git repository, so no history shows the held-out "
                "targets unseen",
                "put the project under git, or remove held_out",
            )
        )
    hits = held_out_pairs(root, targets, upto)
    if hits:
        commit, path, target = hits[0]
        raise UserError(
            Problem(
                plan_file,
                "held_out",
                f"target {target} is held out, but commit {commit} added a ledger row of it "
                f"({path}), before {when}",
                "a held-out target must be unseen: hold out another target, or drop it from "
                "held_out and say the measurement is not blind",
            )
        )

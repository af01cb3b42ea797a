"""Held-out targets, verified from git history: how a checker is measured blind.

A plan's `held_out:` names targets on which no committed ledger of the repository holds a
pair. `harness freeze` checks the history of HEAD (the freeze commit will follow it), and
`harness publish` the history of the run's freeze commit: a commit that added a pair of a
held-out target to any `*ledger.jsonl` file, or any JSONL file under `results/`, refuses the
command, naming the commit and the file. Rows are found by git's diff search (`git log -G`)
and then read from the commit itself, so a row counts only when it parses, is a pair (has a
`pair_id`) and names the target (or its mutant does).

A refreeze stays blind when only the harness's own code changed (`blind_predecessor`): an
earlier record of the plan's freeze, committed before any held-out row, that froze the same
plan, checker, contracts, drawn corpus, corpora, controls, target source and versions: every
hash group but `harness`. The held-out targets were unseen when all that the measurement
depends on but the scoring machinery was fixed; the new record names that freeze
(`blind_as_of`), and that its rows equal the blind freeze's is for the refreeze to show
(`bench/same_rows.py`). `harness publish` checks the named freeze the same way.
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


# what a refreeze may change and stay blind: the scoring machinery, nothing the checker is
BLIND_FREE_GROUPS = frozenset({"harness"})


def _same_but_harness(a: dict, b: dict) -> bool:
    """Two freeze records (JSON) that freeze the same everything but the `harness` group."""
    groups = (set(a.get("hashes", {})) | set(b.get("hashes", {}))) - BLIND_FREE_GROUPS
    return (
        all(a["hashes"].get(g) == b["hashes"].get(g) for g in groups)
        and a.get("target_versions") == b.get("target_versions")
        and a.get("package_versions") == b.get("package_versions")
        and a.get("checker") == b.get("checker")
        and a.get("plan") == b.get("plan")
    )


def record_at(root: Path, record_file: Path, commit: str) -> dict:
    """The freeze record `record_file` as committed in `commit` (JSON); {} when the commit
    does not hold it or it does not parse."""
    top = toplevel(root)
    if top is None:
        return {}
    rel = record_file.resolve().relative_to(top.resolve()).as_posix()
    shown = _git(top, "show", f"{commit}:{rel}")
    try:
        record = json.loads(shown.stdout) if shown.returncode == 0 else {}
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def blind_predecessor(
    root: Path, record_file: Path, record: dict, targets: list[str], upto: str
) -> str | None:
    """The freeze id of the oldest record of `record_file` in the history of `upto` that was
    committed before any ledger row of `targets` and freezes what `record` (JSON) freezes,
    the `harness` group aside; None when there is none."""
    top = toplevel(root)
    if top is None or not targets:
        return None
    rel = record_file.resolve().relative_to(top.resolve()).as_posix()
    log = _git(top, "log", "--reverse", "--format=%H", upto, "--", rel)
    for commit in log.stdout.split() if log.returncode == 0 else []:
        shown = _git(top, "show", f"{commit}:{rel}")
        try:
            earlier = json.loads(shown.stdout) if shown.returncode == 0 else None
        except ValueError:
            continue
        if (
            isinstance(earlier, dict)
            and earlier.get("freeze_id") != record.get("freeze_id")
            and _same_but_harness(earlier, record)
            and not held_out_pairs(root, targets, commit)
        ):
            return str(earlier["freeze_id"])
    return None

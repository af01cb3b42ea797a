"""A freeze provably earlier than its results, shown from the commit order in `git log`.

The rule: the *freeze commit* of freeze X is the oldest commit whose
`plans/<plan>.freeze.json` carries freeze id X. A run is provably pre-registered when
(1) no commit touching results of X (`results/<plan>/X*`, `results/reference/<plan>/X*`)
is the freeze commit itself or one of its ancestors, and (2) its freeze record was
committed when the run started (`run.json`'s `freeze_record`, written by `harness run`:
run folders are not tracked, so only the run can say so). Tags are not consulted: they need not
travel with a clone.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harness.errors import Problem, UserError


class FreezeCommit(BaseModel):
    """Where the freeze record of one freeze id first entered the history (run.json)."""

    model_config = ConfigDict(extra="forbid")
    path: str  # the record, relative to the repository's top
    freeze_id: str
    # committed: the freeze commit's record equals the working tree's; differs: a commit
    # carries this freeze id but another record text; uncommitted: no commit carries it;
    # no_git: the project is not in a git work tree
    status: Literal["committed", "differs", "uncommitted", "no_git"]
    commit: str | None = None
    matches_working_tree: bool = False

    def warning(self) -> str | None:
        """What is wrong (the record's path aside), or None when it is committed as it is."""
        if self.status == "committed":
            return None
        if self.status == "differs":
            return (
                f"the working tree's record of freeze {self.freeze_id} differs from "
                f"the one committed in {self.commit}"
            )
        if self.status == "no_git":
            return (
                "not in a git repository, so nothing shows that freeze "
                f"{self.freeze_id} came before this run"
            )
        return f"freeze {self.freeze_id} is not committed, so nothing shows it came before this run"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )


def toplevel(root: Path) -> Path | None:
    done = _git(root, "rev-parse", "--show-toplevel")
    return Path(done.stdout.strip()) if done.returncode == 0 else None


def _record_id(text: str) -> str | None:
    try:
        value = json.loads(text).get("freeze_id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def freeze_commit(root: Path, record: Path, freeze_id: str) -> FreezeCommit:
    """The freeze commit of `freeze_id` for the record file `record` (see the module rule)."""
    top = toplevel(root)
    if top is None:
        return FreezeCommit(path=str(record), freeze_id=freeze_id, status="no_git")
    rel = record.resolve().relative_to(top.resolve()).as_posix()
    # oldest first; each line a commit that changed the record
    log = _git(top, "log", "--reverse", "--format=%H", "--", rel)
    commits = log.stdout.split() if log.returncode == 0 else []
    for commit in commits[_first_naming(top, rel, freeze_id, commits) :]:
        shown = _git(top, "show", f"{commit}:{rel}")
        if shown.returncode == 0 and _record_id(shown.stdout) == freeze_id:
            same = record.exists() and shown.stdout == record.read_text(encoding="utf-8")
            return FreezeCommit(
                path=rel,
                freeze_id=freeze_id,
                status="committed" if same else "differs",
                commit=commit,
                matches_working_tree=same,
            )
    return FreezeCommit(path=rel, freeze_id=freeze_id, status="uncommitted")


def _first_naming(top: Path, rel: str, freeze_id: str, commits: list[str]) -> int:
    """Where in `commits` (the record's, oldest first) the walk for `freeze_id` may start:
    at the first commit that changed how often the record names the id (git's pickaxe,
    `-S`, merges' diffs too: `-m`). No commit before it names the id, so none carries it;
    a record is large (every hash), so each `git show` skipped is worth it. Without such
    a commit, the walk starts at the oldest, as it always did."""
    log = _git(top, "log", "-m", "--format=%H", f"-S{freeze_id}", "--", rel)
    naming = set(log.stdout.split()) if log.returncode == 0 else set()
    return next((at for at, commit in enumerate(commits) if commit in naming), 0)


def results_pathspecs(plan: str, freeze_id: str) -> list[str]:
    # git's default pathspec matches `*` across `/`: every file of every such run folder
    return [f"results/{plan}/{freeze_id}*", f"results/reference/{plan}/{freeze_id}*"]


def results_commits(root: Path, plan: str, freeze_id: str) -> list[str]:
    """Commits touching results of `freeze_id` under the project `root`, oldest first."""
    # run from `root`: a pathspec is relative to the current folder, wherever the top is
    done = subprocess.run(
        ["git", "log", "--reverse", "--format=%H", "--", *results_pathspecs(plan, freeze_id)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.split() if done.returncode == 0 else []


def _is_ancestor(top: Path, older: str, newer: str) -> bool:
    return _git(top, "merge-base", "--is-ancestor", older, newer).returncode == 0


def check_order(root: Path, run_dir: Path, plan: str, freeze_id: str, recorded: dict | None):
    """Raise unless the run in `run_dir` is provably later than its freeze (module rule);
    `recorded` is run.json's `freeze_record`."""
    manifest = str(run_dir / "run.json")
    top = toplevel(root)
    if top is None:
        raise UserError(
            Problem(
                str(root),
                "git",
                "not in a git repository, so the order of freeze and results cannot be shown",
                "commit the freeze record in git before the run (harness freeze prints how)",
            )
        )
    record = root / "plans" / f"{plan}.freeze.json"
    found = freeze_commit(root, record, freeze_id)
    if found.commit is None:
        raise UserError(
            Problem(
                found.path,
                "freeze_id",
                f"no commit holds the record of freeze {freeze_id}",
                "commit the freeze record (harness freeze prints how), then run again",
            )
        )
    for commit in results_commits(root, plan, freeze_id):
        if commit == found.commit or _is_ancestor(top, commit, found.commit):
            where = "the same commit" if commit == found.commit else f"commit {commit}"
            raise UserError(
                Problem(
                    found.path,
                    "freeze commit",
                    f"freeze {freeze_id} was first committed in {found.commit}, and {where} "
                    f"already holds results of that freeze "
                    f"({' or '.join(results_pathspecs(plan, freeze_id))}): history cannot "
                    "show that the freeze came first",
                    "freeze anew (harness draw --refreeze, harness freeze), commit the record "
                    "alone, then run and publish",
                )
            )
    if not recorded or not recorded.get("commit"):
        raise UserError(
            Problem(
                manifest,
                "freeze_record",
                f"the run did not find freeze {freeze_id} committed when it started "
                f"(status {(recorded or {}).get('status', 'not recorded')})",
                f"remove {run_dir} and run again, now that {found.commit[:12]} holds the record",
            )
        )
    return found

"""`held_out:` verified from git history by freeze and publish, in a temporary repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.execution.draw import Corpus, write_corpus
from harness.execution.freeze import freeze
from harness.execution.held_out import check_held_out, held_out_pairs
from harness.execution.plan import load_plan
from harness.execution.publish import _check_held_out

PLAN = """
schema_version: 1
name: blind
description: toy held out
seed: 1
arms:
  - name: closed_world
    kind: closed_world
    target: toy_domain
    tools: [deposit]
    operators: [M-IGNARG]
    draw_per_operator: 1
held_out: [{held}]
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _repository(tmp_path: Path, held: str = "toy_domain") -> Path:
    root = tmp_path / "repo"
    (root / "plans").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.org")
    git(root, "config", "user.name", "t")
    git(root, "config", "commit.gpgsign", "false")
    (root / "plans" / "blind.yaml").write_text(PLAN.format(held=held))
    (root / "README").write_text("x\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def _commit_ledger(root: Path, target: str, where: str = "results/other/abc") -> str:
    folder = root / where
    folder.mkdir(parents=True)
    row = {"pair_id": "m:t", "target": target, "status": "detected"}
    (folder / "ledger.jsonl").write_text(json.dumps(row, sort_keys=True) + "\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"a ledger of {target}")
    return git(root, "rev-parse", "HEAD")


def _drawn(root: Path) -> None:
    plan = load_plan(root / "plans" / "blind.yaml")
    (root / "mutants").mkdir(exist_ok=True)
    write_corpus(
        root / "mutants" / "blind", plan, [], Corpus(plan="blind", seed=1, pairs=[], liveness={})
    )


def test_freeze_refuses_naming_the_commit_that_committed_a_held_out_pair(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    start = git(root, "rev-parse", "HEAD")
    _commit_ledger(root, "agentdojo-banking", "results/other/0")  # another target: fine
    plan_path = root / "plans" / "blind.yaml"
    plan = load_plan(plan_path)
    _drawn(root)
    assert freeze(plan_path, plan, root, []).freeze_id
    seen = _commit_ledger(root, "toy_domain")
    with pytest.raises(UserError) as raised:
        freeze(plan_path, plan, root, [])
    (problem,) = raised.value.problems
    assert problem.where == "held_out"
    assert seen in problem.message and "results/other/abc/ledger.jsonl" in problem.message
    # publish looks at the history up to the freeze commit only
    assert held_out_pairs(root, ["toy_domain"], start) == []
    assert held_out_pairs(root, ["toy_domain"], "HEAD") == [
        (seen, "results/other/abc/ledger.jsonl", "toy_domain")
    ]
    _check_held_out(root, "blind", start)  # no error
    with pytest.raises(UserError, match=seen):
        _check_held_out(root, "blind", seen)


def test_a_row_that_only_mentions_the_target_elsewhere_does_not_count(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    folder = root / "results" / "x"
    folder.mkdir(parents=True)
    row = {"pair_id": "a", "target": "agentdojo-banking", "note": '"target": "toy_domain"'}
    (folder / "ledger.jsonl").write_text(json.dumps(row) + "\n")
    # a score-at-risk row of the target is no pair
    (folder / "trace.jsonl").write_text(json.dumps({"target": "toy_domain"}) + "\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a ledger quoting the name")
    assert held_out_pairs(root, ["toy_domain"], "HEAD") == []


def test_held_out_outside_git_is_refused_and_an_unknown_target_is_a_plan_error(
    tmp_path: Path,
) -> None:
    with pytest.raises(UserError, match="not in a git repository"):
        check_held_out(tmp_path, "plans/p.yaml", ["toy_domain"], "HEAD", "this freeze")
    check_held_out(tmp_path, "plans/p.yaml", [], "HEAD", "this freeze")  # nothing held out
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "blind.yaml").write_text(PLAN.format(held="bfcl-nowhere"))
    with pytest.raises(UserError, match="bfcl-nowhere is no target"):
        load_plan(tmp_path / "plans" / "blind.yaml")


def test_a_pair_in_any_jsonl_under_results_counts(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    folder = root / "results" / "elsewhere"
    folder.mkdir(parents=True)
    row = {"pair_id": "m:t", "mutant": {"target": "toy_domain"}}
    (folder / "rows.jsonl").write_text(json.dumps(row, sort_keys=True) + "\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "rows")
    head = git(root, "rev-parse", "HEAD")
    assert held_out_pairs(root, ["toy_domain"], "HEAD") == [
        (head, "results/elsewhere/rows.jsonl", "toy_domain")
    ]


def _inputs_changed(monkeypatch: pytest.MonkeyPatch, group: str) -> None:
    """The next freeze sees one more file in hash group `group`, as if that code changed."""
    import harness.execution.freeze as freezing

    real = freezing.current_inputs

    def changed(*args, **kwargs):
        hashes, versions = real(*args, **kwargs)
        hashes = {**hashes, group: {**hashes.get(group, {}), "changed.py": "0" * 64}}
        return hashes, versions

    monkeypatch.setattr(freezing, "current_inputs", changed)


def test_a_refreeze_of_only_the_harness_stays_blind_and_names_its_blind_freeze(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repository(tmp_path)
    plan_path = root / "plans" / "blind.yaml"
    plan = load_plan(plan_path)
    _drawn(root)
    blind = freeze(plan_path, plan, root, [])
    assert blind.blind_as_of is None
    assert "blind_as_of" not in (root / "plans" / "blind.freeze.json").read_text()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the blind freeze, alone")
    _commit_ledger(root, "toy_domain")  # its results: the held-out target is seen now
    _inputs_changed(monkeypatch, "harness")
    refrozen = freeze(plan_path, plan, root, [])
    assert refrozen.freeze_id != blind.freeze_id and refrozen.blind_as_of == blind.freeze_id
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the refreeze")
    _check_held_out(root, "blind", git(root, "rev-parse", "HEAD"))  # publish: no error
    # a record naming a freeze that was not blind is refused by publish
    record = json.loads((root / "plans" / "blind.freeze.json").read_text())
    (root / "plans" / "blind.freeze.json").write_text(
        json.dumps({**record, "blind_as_of": "0123456789abcdef"})
    )
    git(root, "commit", "-qam", "an edited record")
    with pytest.raises(UserError, match="held out"):
        _check_held_out(root, "blind", git(root, "rev-parse", "HEAD"))


def test_a_refreeze_that_changes_what_the_checker_is_is_not_blind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repository(tmp_path)
    plan_path = root / "plans" / "blind.yaml"
    plan = load_plan(plan_path)
    _drawn(root)
    freeze(plan_path, plan, root, [])
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the blind freeze, alone")
    _commit_ledger(root, "toy_domain")
    for group in ("contracts", "checker_scope"):
        with monkeypatch.context() as patched:
            _inputs_changed(patched, group)
            with pytest.raises(UserError, match="is held out"):
                freeze(plan_path, plan, root, [])

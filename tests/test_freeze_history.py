"""A freeze provably earlier than its results: `harness freeze`, `run` and `publish` in a
temporary git repository, through the CLI, including the publish refusal on a run whose
freeze commit holds (or follows) its results."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from test_runner import drawn_and_frozen, harness, project

from harness.execution.freeze import FreezeRecord

REPO = Path(__file__).resolve().parents[1]


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def repository(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "test@example.org")
    git(root, "config", "user.name", "test")
    git(root, "config", "commit.gpgsign", "false")


def printed_commands(stdout: str) -> list[list[str]]:
    return [
        shlex.split(line.strip()) for line in stdout.splitlines() if line.startswith("    git ")
    ]


def freeze_as_printed(root: Path) -> str:
    """Draw, freeze and run the git commands `harness freeze` printed; the freeze commit."""
    assert harness("draw", "plans/small.yaml", cwd=root).returncode == 0
    done = harness("freeze", "plans/small.yaml", cwd=root)
    assert done.returncode == 0, done.stderr
    commands = printed_commands(done.stdout)
    assert [c[:2] for c in commands] == [["git", "add"], ["git", "commit"], ["git", "tag"]]
    assert "plans/small.freeze.json" in commands[0]
    for command in commands:
        subprocess.run(command, cwd=root, check=True, capture_output=True)
    return git(root, "rev-parse", "HEAD")


def run_manifest(root: Path) -> dict:
    (run,) = (p for p in (root / "results" / "small").iterdir() if p.is_dir())
    return json.loads((run / "run.json").read_text())


def test_freeze_commits_nothing_and_prints_the_commands(tmp_path):
    root = project(tmp_path, per_operator=1)
    repository(root)
    git(root, "commit", "-q", "--allow-empty", "-m", "start")
    commit = freeze_as_printed(root)
    record = FreezeRecord.model_validate_json((root / "plans/small.freeze.json").read_text())
    assert git(root, "log", "-1", "--format=%s") == f"freeze {record.freeze_id} of plan small"
    assert git(root, "tag") == f"freeze/small/{record.freeze_id}"
    assert git(root, "status", "--porcelain") == ""  # the printed add took every input
    assert record.schema_version == 2
    assert {"pydantic", "PyYAML"} <= set(record.package_versions or {})

    done = harness("run", "plans/small.yaml", "--strict", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    manifest = run_manifest(root)
    assert manifest["freeze_record"] == {
        "path": "plans/small.freeze.json",
        "freeze_id": record.freeze_id,
        "status": "committed",
        "commit": commit,
        "matches_working_tree": True,
    }
    assert manifest["package_versions"] == record.package_versions
    # results of that id exist now: freezing the same inputs again is refused, nothing written
    before = (root / "plans/small.freeze.json").read_bytes()
    again = harness("freeze", "plans/small.yaml", cwd=root)
    assert again.returncode == 2
    assert f"results of freeze {record.freeze_id} already exist" in again.stderr
    assert (root / "plans/small.freeze.json").read_bytes() == before

    run_dir = root / "results" / "small" / record.freeze_id
    published = harness("publish", str(run_dir), cwd=root)
    assert published.returncode == 0, published.stderr
    reference = root / "results" / "reference" / "small" / record.freeze_id
    for name in ("ledger.jsonl", "run.json", "baseline.json", "coverage.json"):
        assert (reference / name).read_bytes() == (run_dir / name).read_bytes(), name


def test_an_uncommitted_freeze_warns_and_strict_refuses(tmp_path):
    root = project(tmp_path, per_operator=1)
    repository(root)
    drawn_and_frozen(root)
    strict = harness("run", "plans/small.yaml", "--strict", cwd=root)
    assert strict.returncode == 2
    assert "is not committed" in strict.stderr and "Traceback" not in strict.stderr
    assert not (root / "results").exists()
    done = harness("run", "plans/small.yaml", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "warning: " in done.stderr and "is not committed" in done.stderr
    manifest = run_manifest(root)
    assert manifest["freeze_record"]["status"] == "uncommitted"
    assert manifest["freeze_record"]["commit"] is None
    # committed only after the run: the run cannot show it came later
    git(root, "add", "plans", "mutants")
    git(root, "commit", "-q", "-m", "freeze after the run")
    refused = harness("publish", f"results/small/{manifest['run']}", cwd=root)
    assert refused.returncode == 2
    assert "did not find freeze" in refused.stderr
    # resuming the run does not make it look pre-registered: the first start's finding stays
    assert harness("run", "plans/small.yaml", cwd=root).returncode == 0
    assert run_manifest(root)["freeze_record"]["status"] == "uncommitted"
    # a record edited after its commit: a fresh run says so
    shutil.rmtree(root / "results")
    record = root / "plans/small.freeze.json"
    record.write_text(record.read_text().replace('"created_at": "', '"created_at": "0'))
    assert harness("run", "plans/small.yaml", cwd=root).returncode == 0
    assert run_manifest(root)["freeze_record"]["status"] == "differs"


def test_publish_refuses_a_freeze_committed_with_its_results(tmp_path):
    """The repository's own past: the freeze record and its results in one commit."""
    root = project(tmp_path, per_operator=1)
    repository(root)
    drawn_and_frozen(root)
    assert harness("run", "plans/small.yaml", cwd=root).returncode == 0
    run_id = run_manifest(root)["run"]
    published = root / "results" / "reference" / "small" / run_id
    published.mkdir(parents=True)
    shutil.copy2(root / "results" / "small" / run_id / "ledger.jsonl", published)
    git(root, "add", "plans", "mutants", "results/reference")
    git(root, "commit", "-q", "-m", "freeze and results together")
    both = git(root, "rev-parse", "HEAD")
    refused = harness("publish", f"results/small/{run_id}", cwd=root)
    assert refused.returncode == 2
    assert f"first committed in {both}, and the same commit already holds results" in (
        refused.stderr
    )
    assert "Traceback" not in refused.stderr


def test_publish_refuses_a_freeze_committed_after_its_results(tmp_path):
    root = project(tmp_path, per_operator=1)
    repository(root)
    drawn_and_frozen(root)
    assert harness("run", "plans/small.yaml", cwd=root).returncode == 0
    run_id = run_manifest(root)["run"]
    published = root / "results" / "reference" / "small" / run_id
    published.mkdir(parents=True)
    shutil.copy2(root / "results" / "small" / run_id / "ledger.jsonl", published)
    git(root, "add", "results/reference")
    git(root, "commit", "-q", "-m", "results first")
    results = git(root, "rev-parse", "HEAD")
    git(root, "add", "plans", "mutants")
    git(root, "commit", "-q", "-m", "then the freeze")
    freeze = git(root, "rev-parse", "HEAD")
    assert harness("run", "plans/small.yaml", cwd=root).returncode == 0
    refused = harness("publish", f"results/small/{run_id}", cwd=root)
    assert refused.returncode == 2
    assert f"first committed in {freeze}, and commit {results} already holds" in refused.stderr


def test_a_package_version_other_than_the_frozen_one_warns_and_strict_refuses(tmp_path):
    root = project(tmp_path, per_operator=1)
    repository(root)
    git(root, "commit", "-q", "--allow-empty", "-m", "start")
    freeze_as_printed(root)
    path = root / "plans/small.freeze.json"
    record = json.loads(path.read_text())
    record["package_versions"]["pydantic"] = "0.0.1"
    path.write_text(json.dumps(record, indent=1) + "\n")
    git(root, "commit", "-q", "-am", "a freeze under another pydantic")
    strict = harness("run", "plans/small.yaml", "--strict", cwd=root)
    assert strict.returncode == 2
    assert "pydantic: package_versions: installed" in strict.stderr
    assert "0.0.1 recorded in freeze" in strict.stderr
    done = harness("run", "plans/small.yaml", cwd=root)
    assert done.returncode == 0 and "warning: pydantic: package_versions" in done.stderr


def test_the_freeze_commit_is_the_oldest_carrying_the_id_and_few_records_are_read(
    tmp_path, monkeypatch
):
    """`freeze_commit` starts its walk where git's pickaxe first sees the id named: the
    answer is the oldest commit whose record carries the id, even when an older record
    names it elsewhere (so the commit that first carries it changed no count), and the
    newest freeze costs one record read, not one per commit of the record's history."""
    from harness.execution import history

    repository(tmp_path)
    record = tmp_path / "plans" / "p.freeze.json"
    record.parent.mkdir()
    commits = []
    for text in (
        {"freeze_id": "aaaa000000000000"},
        {"freeze_id": "bbbb000000000000", "note": "cccc000000000000"},  # names c, carries b
        {"freeze_id": "cccc000000000000"},  # carries c: c's count is 1 before and after
        {"freeze_id": "dddd000000000000"},
        {"freeze_id": "cccc000000000000", "again": True},
        {"freeze_id": "eeee000000000000"},
    ):
        record.write_text(json.dumps(text))
        git(tmp_path, "add", "plans")
        git(tmp_path, "commit", "-q", "-m", text["freeze_id"])
        commits.append(git(tmp_path, "rev-parse", "HEAD"))
    shown: list[str] = []
    real = history._git

    def counted(root, *args):
        if args[0] == "show":
            shown.append(args[1])
        return real(root, *args)

    monkeypatch.setattr(history, "_git", counted)
    found = history.freeze_commit(tmp_path, record, "cccc000000000000")
    assert (found.status, found.commit) == ("differs", commits[2])
    assert history.freeze_commit(tmp_path, record, "aaaa000000000000").commit == commits[0]
    shown.clear()
    newest = history.freeze_commit(tmp_path, record, "eeee000000000000")
    assert (newest.status, newest.commit, newest.matches_working_tree) == (
        "committed",
        commits[5],
        True,
    )
    assert shown == [f"{commits[5]}:plans/p.freeze.json"]
    never = history.freeze_commit(tmp_path, record, "ffff000000000000")
    assert never.status == "uncommitted" and never.commit is None


def test_committed_schema_1_records_are_read_unchanged():
    # the records of freezes 1150b599761a06f8 and 3c14510618c51d9d as committed in 68fe0f9
    for name in ("closed_world", "open_world"):
        text = (REPO / "tests" / "fixtures" / "freeze_schema_1" / f"{name}.freeze.json").read_text()
        record = FreezeRecord.model_validate_json(text)
        assert record.schema_version == 1 and record.package_versions is None
        assert json.loads(text)["freeze_id"] == record.freeze_id


def test_the_readme_main_plan_verifies_at_this_checkout():
    """The README's main job (`harness run plans/closed_world.yaml`) verifies its freeze
    before anything else: an edit to any file a freeze hashes (harness/execution/,
    harness/checker/, a contract, an adapter: `harness.execution.scope`) that is not
    followed by a refreeze would make it refuse on every fresh clone, while every other
    test passes (the whole suite did on 2026-12-06 with such an edit). The plan covers the
    toy domain and all three benchmarks, so the harness files every plan hashes too."""
    from harness.execution.freeze import verify
    from harness.execution.plan import load_plan, project_root

    plan_path = REPO / "plans" / "closed_world.yaml"
    record, problems = verify(plan_path, load_plan(plan_path), project_root(plan_path))
    assert problems == [], "\n".join(p.line() for p in problems)
    assert (
        record is not None
        and record.freeze_id
        == json.loads((REPO / "plans" / "closed_world.freeze.json").read_text())["freeze_id"]
    )


README_RUN_ROW = re.compile(
    r"^\| `(\w+)` \([^|]*\) \| `(\w+)/([0-9a-f]{16})` \| ([\d,]+) \| (\d+) / (\d+) / (\d+) \|$",
    re.M,
)


def test_the_readme_names_the_run_of_each_plans_freeze_with_its_pairs_and_verdict():
    """The README's table of the newest runs, and its example of the main job, follow the
    freezes: for each of the four plans, the run of the freeze its plan is frozen at,
    published under results/reference/, with that run's pair count and its verdict. A
    refreeze whose runs were published without the README brought along fails here."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = {m[0]: m[1:] for m in README_RUN_ROW.findall(readme)}
    assert sorted(rows) == ["closed_world", "closed_world_all", "open_world", "open_world_all"]
    for plan, (folder, run_id, pairs, held, failed, undecided) in rows.items():
        record = json.loads((REPO / "plans" / f"{plan}.freeze.json").read_text())
        assert (folder, run_id) == (plan, record["freeze_id"]), plan
        run = REPO / "results" / "reference" / plan / run_id
        with (run / "ledger.jsonl").open(encoding="utf-8") as ledger:
            assert int(pairs.replace(",", "")) == sum(1 for line in ledger if line.strip())
        predictions = (run / "tables" / "predictions.md").read_text(encoding="utf-8")
        verdict = re.search(
            r"^- (\d+) held, (\d+) failed, (\d+) undecided of \d+\.$", predictions, re.M
        )
        assert verdict is not None and verdict.groups() == (held, failed, undecided), plan
    main = rows["closed_world"][1]
    example = re.search(
        r"^results/closed_world/([0-9a-f]{16}): (\d+) pairs scored now", readme, re.M
    )
    assert example is not None and example.groups() == (main, rows["closed_world"][2])
    held, failed, undecided = map(int, rows["closed_world"][3:])
    line = f"verdict: {held + failed + undecided} predictions scored: {held} held, {failed} failed"
    assert f"\n{line}, {undecided} undecided\n" in readme

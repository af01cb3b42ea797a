"""`harness cache prune`: the set-up cache of freezes no plan is frozen at goes, run as users
run it (the CLI in a subprocess)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_runner import drawn_and_frozen, harness, project

CACHE = Path("results") / ".setup-cache"


def fake_project(tmp_path: Path, current: str, others: list[str]) -> Path:
    root = tmp_path / "p"
    (root / "plans").mkdir(parents=True)
    (root / "plans" / "a.freeze.json").write_text(json.dumps({"freeze_id": current}))
    for freeze_id in [current, *others]:
        folder = root / CACHE / freeze_id
        folder.mkdir(parents=True)
        (folder / "baseline-x.json").write_bytes(b"x" * 1500)
    return root


def test_prune_keeps_the_current_freeze_and_dry_run_removes_nothing(tmp_path: Path) -> None:
    root = fake_project(tmp_path, "aaaa", ["bbbb", "cccc"])
    done = harness("cache", "prune", "--dry-run", "--root", str(root), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "would remove bbbb (1.5 KB)" in done.stdout
    assert "kept    aaaa (1.5 KB): plans/a.freeze.json" in done.stdout
    assert sorted(p.name for p in (root / CACHE).iterdir()) == ["aaaa", "bbbb", "cccc"]

    done = harness("cache", "prune", cwd=root)  # --root defaults to the current folder
    assert done.returncode == 0, done.stderr
    assert "removed 3.0 KB, kept 1.5 KB (1 current freeze)" in done.stdout
    assert [p.name for p in (root / CACHE).iterdir()] == ["aaaa"]

    done = harness("cache", "prune", "--all", cwd=root)
    assert done.returncode == 0, done.stderr
    assert list((root / CACHE).iterdir()) == []


def test_an_unreadable_freeze_record_is_one_line_and_nothing_is_removed(tmp_path: Path) -> None:
    root = fake_project(tmp_path, "aaaa", ["bbbb"])
    (root / "plans" / "b.freeze.json").write_text("{not json")
    done = harness("cache", "prune", cwd=root)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: plans/b.freeze.json: freeze_id: ")
    assert "--all" in lines[0]
    assert sorted(p.name for p in (root / CACHE).iterdir()) == ["aaaa", "bbbb"]


def test_a_folder_without_plans_is_refused_unless_all(tmp_path: Path) -> None:
    done = harness("cache", "prune", "--root", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "no plans/ folder" in done.stderr
    done = harness("cache", "prune", "--all", "--root", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0 and "removed 0 B, kept 0 B" in done.stdout


def test_a_real_runs_cache_survives_a_prune_and_a_stale_copy_does_not(tmp_path: Path) -> None:
    """After a real run, its freeze's cache is kept byte for byte and a stale freeze's goes;
    the next run of the same freeze still takes its set-up from the cache."""
    root = project(tmp_path)
    drawn_and_frozen(root)
    assert harness("run", "plans/small.yaml", "--workers", "1", cwd=root).returncode == 0
    freeze_id = json.loads((root / "plans" / "small.freeze.json").read_text())["freeze_id"]
    current = root / CACHE / freeze_id
    before = {p.name: p.read_bytes() for p in current.iterdir()}
    assert before, "the run cached no set-up"
    shutil.copytree(current, root / CACHE / "0123456789abcdef")
    done = harness("cache", "prune", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "removed 0123456789abcdef" in done.stdout
    assert [p.name for p in (root / CACHE).iterdir()] == [freeze_id]
    assert {p.name: p.read_bytes() for p in current.iterdir()} == before
    shutil.rmtree(root / "results" / "small")
    again = harness("run", "plans/small.yaml", "--workers", "1", cwd=root)
    assert again.returncode == 0, again.stderr
    assert {p.name: p.read_bytes() for p in current.iterdir()} == before  # read, not rewritten

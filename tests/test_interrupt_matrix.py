"""Issue 32, item 3: every command that writes is all-or-nothing. Each writing command is
stopped by a real SIGINT or SIGTERM sent to itself in the middle of its writes (the n-th
call of a function it writes through); the command prints one line and exits 130 or 143,
no staging file is left anywhere, and what it would have replaced is byte-identical."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from test_runner import committed, drawn_and_frozen, harness, project

from harness.cli import main


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """A finished, reported and published 8-pair run in a git repository."""
    root = project(tmp_path_factory.mktemp("matrix"), per_operator=2)
    drawn_and_frozen(root)
    committed(root)
    for args in (["run", "plans/small.yaml"], ["report", "RUN"], ["publish", "RUN"]):
        (run,) = (root / "results" / "small").glob("[!r]*") if args[1] == "RUN" else [None]
        args = [str(run) if a == "RUN" else a for a in args]
        done = harness(*args, cwd=root)
        assert done.returncode == 0, done.stderr
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the project but git's, by relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


# command -> (arguments, the function it writes through, the call that is interrupted)
WRITERS = {
    "draw": (["draw", "plans/small.yaml", "--refreeze"], "pathlib.Path.write_text", 4),
    "freeze": (["freeze", "plans/small.yaml"], "os.fsync", 1),
    "report": (["report", "RUN"], "harness.analysis.report._write", 5),
    "publish": (["publish", "RUN"], "shutil.copy2", 2),
}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", list(WRITERS))
def test_an_interrupted_writer_leaves_nothing_half_done(
    published, tmp_path, monkeypatch, capsys, command, signum
):
    root = tmp_path / "small"
    shutil.copytree(published, root, symlinks=True)
    (run,) = (root / "results" / "small").glob("[!r]*")
    args, where, nth = WRITERS[command]
    args = [str(run) if a == "RUN" else a for a in args]
    module_name, _, attribute = where.rpartition(".")
    if module_name == "pathlib.Path":
        import pathlib

        owner: object = pathlib.Path
    else:
        import importlib

        owner = importlib.import_module(module_name)
    original = getattr(owner, attribute)
    calls = 0

    def interrupted(*a, **k):
        nonlocal calls
        calls += 1
        result = original(*a, **k)
        if calls == nth:
            os.kill(os.getpid(), signum)  # delivered right here, mid-write
        return result

    if command == "freeze":  # a freeze with results of itself is refused before writing
        shutil.rmtree(root / "results")
    before = snapshot(root)
    monkeypatch.chdir(root)
    monkeypatch.setattr(owner, attribute, interrupted)
    # a test process started in the background (CI may be) inherits SIGINT ignored, and
    # Python then installs no KeyboardInterrupt handler: give Ctrl-C its default back
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code = main(args)
    finally:
        signal.signal(signal.SIGINT, saved)
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert calls >= nth, f"{command} wrote through {where} only {calls} times: {err}"
    assert code == 128 + signum, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted ("), err
    left = [
        p
        for p in root.rglob("*")
        if (".tmp" in p.name or ".old." in p.name) and ".git" not in p.parts
    ]
    assert left == []
    assert snapshot(root) == before


def test_a_redraw_keeps_the_previous_draw_until_the_new_one_is_complete(published, tmp_path):
    root = tmp_path / "small"
    shutil.copytree(published, root, symlinks=True)
    before = snapshot(root / "mutants")
    done = harness("draw", "plans/small.yaml", "--refreeze", cwd=root)
    assert done.returncode == 0, done.stderr
    after = snapshot(root / "mutants")
    assert after != before and "small/README.md" in after and "small/pool.json" in after
    assert not [p for p in (root / "mutants").iterdir() if p.name.startswith(".")]
    subprocess.run(["git", "-C", str(root), "status", "--short"], check=True)

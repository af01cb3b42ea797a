"""Issue 31: a first run's set-up computed by target in helper processes, into the set-up
cache (`harness.execution.setup_helpers`). The entries are those one process writes, byte
for byte; the rows are the same; run.json counts the helpers' work as computed; a rerun
whose cache holds the set-up starts none; a helper that fails or dies leaves its target to
the run, and no helper outlives the set-up."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import shutil
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_interrupts import session_members, start_run, wait_until
from test_runner import comparable, drawn_and_frozen, harness, ledger
from test_setup_cache import TWO_TARGETS

from harness.execution.setup_cache import FOLDER, SetupCache
from harness.execution.setup_helpers import compute_in_helpers


def _two(tmp_path: Path) -> Path:
    """A project holding test_setup_cache's plan of two targets, drawn and frozen."""
    root = tmp_path / "two"
    (root / "plans").mkdir(parents=True)
    (root / "plans" / "two.yaml").write_text(TWO_TARGETS)
    drawn_and_frozen(root, "two")
    return root


def _run(root: Path, workers: int) -> dict:
    done = harness("run", "plans/two.yaml", "--workers", str(workers), cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    (folder,) = (root / "results" / "two").iterdir()
    (setup,) = json.loads((folder / "run.json").read_text())["setup"]
    said = (done.stdout + done.stderr).splitlines()
    return setup | {"said": [line for line in said if line.startswith("set-up: helpers: ")]}


def _cache(root: Path) -> dict[str, bytes]:
    """The set-up cache's entries, file name -> bytes."""
    (folder,) = (root / "results" / FOLDER).iterdir()
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_helpers_write_the_entries_one_process_writes_and_the_rows_are_the_same(
    tmp_path: Path,
) -> None:
    root = _two(tmp_path)
    alone = _run(root, 1)
    assert alone["helpers"] == 0 and not alone["said"] and alone["computed"]
    rows, entries = comparable(ledger(root, "two")), _cache(root)
    shutil.rmtree(root / "results")
    helped = _run(root, 2)
    assert helped["helpers"] == 2, helped
    assert any("2 targets' original tools prepared in 2 processes" in s for s in helped["said"])
    # the helpers' work is counted as computed, as one process's would be
    for field in ("computed", "stored", "from_cache", "refused"):
        assert helped[field] == alone[field], field
    assert comparable(ledger(root, "two")) == rows
    assert _cache(root) == entries  # byte for byte
    shutil.rmtree(root / "results" / "two")  # the set-up cache kept: nothing to help with
    again = _run(root, 2)
    assert again["helpers"] == 0 and not again["said"] and again["computed"] == {}
    assert comparable(ledger(root, "two")) == rows


def _pairs(*targets: str) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(mutant=SimpleNamespace(target=name), tool=tool)
        for name in targets
        for tool in ("a", "b")
    ]


def _complete(ctx, pairs, cache) -> None:
    """A stand-in set-up: one cache entry per pair; target "fails" raises, "dies" exits."""
    assert cache is None  # a helper writes no run-folder file
    for pair in pairs:
        if pair.mutant.target == "fails":
            raise RuntimeError("no such tool")
        if pair.mutant.target == "dies":
            os._exit(3)
        ctx.setup.put("baseline", {"target": pair.mutant.target, "tool": pair.tool}, os.getpid())


def test_each_needed_target_is_computed_in_a_helper_and_its_entries_are_named(
    tmp_path: Path,
) -> None:
    ctx = SimpleNamespace(setup=SetupCache(tmp_path / "cache", "f"))
    pairs = _pairs("one", "two", "three")
    helped = compute_in_helpers(ctx, pairs, 2, lambda name, _: name != "three", _complete)
    assert helped is not None and helped.processes == 2 and helped.failed == []
    assert helped.stored == {"baseline": 4}
    names = {Path(path).name for path in helped.written}
    assert names == {p.name for p in (tmp_path / "cache").iterdir()} and len(names) == 4
    assert ctx.setup.stored == {}  # the run's own counts: the helpers' come by `adopt`
    pids = {json.loads(Path(path).read_text().splitlines()[1]) for path in helped.written}
    assert os.getpid() not in pids
    ctx.setup.adopt(helped.processes, helped.stored, helped.refused, helped.written)
    value = ctx.setup.get("baseline", {"target": "one", "tool": "a"}, int)
    assert value in pids and ctx.setup.computed == {"baseline": 1} and ctx.setup.hits == {}
    assert ctx.setup.summary()["helpers"] == 2 and ctx.setup.summary()["stored"] == {"baseline": 4}
    assert not multiprocessing.active_children()


def test_nothing_is_forked_for_fewer_than_two_targets_or_processes(tmp_path: Path) -> None:
    ctx = SimpleNamespace(setup=SetupCache(tmp_path / "cache", "f"))
    assert compute_in_helpers(ctx, _pairs("one"), 2, lambda *_: True, _complete) is None
    assert compute_in_helpers(ctx, _pairs("one", "two"), 1, lambda *_: True, _complete) is None
    needed = lambda name, _: name == "two"  # noqa: E731
    assert compute_in_helpers(ctx, _pairs("one", "two"), 2, needed, _complete) is None
    assert not (tmp_path / "cache").exists()


def test_a_helper_that_fails_or_dies_leaves_its_target_to_the_run(tmp_path: Path) -> None:
    ctx = SimpleNamespace(setup=SetupCache(tmp_path / "cache", "f"))
    helped = compute_in_helpers(ctx, _pairs("one", "fails"), 2, lambda *_: True, _complete)
    assert helped is not None
    assert helped.failed == ["fails (RuntimeError: no such tool)"]
    assert helped.stored == {"baseline": 2}
    dead = compute_in_helpers(ctx, _pairs("dies", "two"), 2, lambda *_: True, _complete)
    assert dead is not None and dead.failed == ["a helper process ended abnormally"]
    assert not multiprocessing.active_children()


@pytest.mark.parametrize(
    ("sending", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_a_run_stopped_while_its_helpers_work_ends_them_and_keeps_nothing(
    tmp_path: Path, sending, code
) -> None:
    """Ctrl-C (to the whole group, as a terminal sends it) or SIGTERM (to the run alone)
    while the helpers compute the set-up: the run stops with its one line, no process of
    it is left, and nothing stays in results/, which the run created."""
    root = _two(tmp_path)
    run = start_run(root, plan="two", workers=2)
    assert run.stderr is not None
    seen = []
    for line in run.stderr:
        seen.append(line)
        if line.startswith("set-up: helpers: 2 targets"):
            break
    assert wait_until(lambda: len(session_members(run.pid)) >= 3, 10), seen  # both helpers
    if sending == signal.SIGINT:
        os.killpg(run.pid, signal.SIGINT)
    else:
        os.kill(run.pid, signal.SIGTERM)
    try:
        out, err = run.communicate(timeout=60)
    finally:  # whatever a failure left behind
        for pid in session_members(run.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    err = "".join(seen) + err
    assert run.returncode == code, out + err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("interrupted: 0 of "), err
    assert wait_until(lambda: not session_members(run.pid), 5)
    assert not (root / "results").exists()  # the run made it: removed, the cache with it


def test_a_helper_holds_one_targets_set_up_at_a_time(monkeypatch) -> None:
    """What a helper completes for a target is dropped from its context once the target is
    done (written to the cache, or failed), so its next target starts with none of it;
    what the run held before the fork, of other targets, stays. Every table of the
    context keyed by (target, ...) is dropped, whichever tables it has."""
    import dataclasses

    from harness.execution import pair_scoring

    tables = tuple(
        f.name
        for f in dataclasses.fields(pair_scoring.RunContext)
        if f.default_factory is dict and f.name != "reuse"
    )
    assert {"baselines", "observations", "grades", "coverage", "evaluations"} <= set(tables)
    held: list[list[str]] = []

    def complete(ctx, pairs, cache) -> None:
        (name,) = {pair.mutant.target for pair in pairs}
        held.append(sorted({key[0] for table in tables for key in getattr(ctx, table)}))
        for table in tables:
            getattr(ctx, table)[(name, "x")] = object()
        ctx.warmed.add((name, "x"))  # a set keyed by target too
        ctx.reuse.update({pair.pair_id: object() for pair in pairs})
        if name == "failing":
            raise RuntimeError("no")

    monkeypatch.setattr(pair_scoring, "complete_context", complete)
    ctx = pair_scoring.RunContext(None, "f", False, None, {}, None)  # type: ignore[arg-type]
    ctx.reuse["before"] = 1  # type: ignore[assignment]
    ctx.baselines[("run", "x")] = "before"
    for name in ("first", "failing", "last"):
        pairs = [
            SimpleNamespace(mutant=SimpleNamespace(target=name), tool=t, pair_id=f"{name}{t}")
            for t in "ab"
        ]
        with contextlib.suppress(RuntimeError):
            pair_scoring._completed_and_dropped(ctx, pairs, None)
    assert held == [["run"], ["run"], ["run"]]
    assert ctx.baselines == {("run", "x"): "before"} and ctx.reuse == {"before": 1}
    assert all(getattr(ctx, table) == {} for table in tables[1:])
    assert ctx.warmed == set()

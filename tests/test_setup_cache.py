"""Issue 31, item 2: set-up once per freeze. A run keeps its set-up on the original tools
(baselines, liveness observations, coverage records) by content under
results/.setup-cache/<freeze id>/; a rerun takes it with identical rows, a tampered entry is
refused, recomputed and named on stderr, and a resume reaches its rows without running any
set-up on the original in the parent."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_runner import comparable, drawn_and_frozen, harness, ledger, project

from harness.execution import pair_scoring
from harness.execution.coverage import NOTHING, Reuse
from harness.execution.pair_scoring import _shared_observations
from harness.execution.setup_cache import FOLDER, SetupCache, content_digest, shared, unshared


def _run(root: Path):
    done = harness("run", "plans/small.yaml", "--workers", "1", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def refusals(stderr: str) -> list[str]:
    """The set-up cache's lines on entries it refused (`SetupCache._refuse`)."""
    return [line for line in stderr.splitlines() if line.startswith("set-up cache: ")]


def _entries(root: Path, kind: str) -> list[Path]:
    (folder,) = (root / "results" / FOLDER).iterdir()
    return sorted(folder.glob(f"{kind}-*.json"))


@pytest.fixture(scope="module")
def cached_project(tmp_path_factory) -> tuple[Path, list[dict]]:
    root = project(tmp_path_factory.mktemp("setup"), per_operator=2)
    drawn_and_frozen(root)
    first = _run(root)
    assert not refusals(first.stderr), first.stderr
    return root, comparable(ledger(root))


def test_a_rerun_takes_the_set_up_from_the_cache_with_identical_rows(cached_project) -> None:
    root, rows = cached_project
    for kind in ("baseline", "observations", "coverage", "reuse"):
        assert _entries(root, kind), kind  # one entry per tool of the pairs
    stamps = {p: p.stat().st_mtime_ns for p in (root / "results" / FOLDER).rglob("*.json")}
    obtained = _how_obtained(ledger(root))
    shutil.rmtree(root / "results" / "small")  # the run folder and its own caches
    again = _run(root)
    assert not refusals(again.stderr), again.stderr
    assert comparable(ledger(root)) == rows
    assert _how_obtained(ledger(root)) == obtained  # each pair's reuse, read back
    # nothing was recomputed, so nothing was rewritten
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    # and run.json says so: every entry the first run computed and stored, read back
    (folder,) = (root / "results" / "small").iterdir()
    (setup,) = json.loads((folder / "run.json").read_text())["setup"]
    assert setup["computed"] == {} and setup["stored"] == {} and setup["refused"] == {}
    assert setup["from_cache"] == {k: len(_entries(root, k)) for k in setup["from_cache"]}
    assert {"baseline", "observations", "coverage", "reuse"} <= set(setup["from_cache"])
    assert setup["cache"] == f"results/{FOLDER}/{folder.name}"


def _how_obtained(rows) -> list[tuple[str, bool, int]]:
    """Each row's pair, whether it was scored from the original alone, and its reused runs."""
    return sorted((r.pair_id, r.skipped_by_coverage, r.reused_runs) for r in rows)


# toy pairs some of which take runs from the original (`download`'s helpers that its first
# liveness calls never start): 78 pairs, 9 of them with reused runs, in 4 s
REUSING_PLAN = """
schema_version: 1
name: small
description: a plan some of whose pairs take runs from the original, for tests
seed: 7
timeout_seconds: 20
liveness_probes_per_tool: 4
arms:
  - name: toy-open
    kind: open_world
    target: toy_domain
    tools: [download, deposit]
    operators: [MM-call_arg, MM-string]
    draw: all
"""


def test_each_pairs_reuse_is_read_back_and_an_entry_missing_a_pair_is_worked_out_again(
    tmp_path: Path,
) -> None:
    """A rerun takes each pair's reuse from the cache, and its rows are obtained as the first
    run's were. A tool's entry holds the pairs of the run that stored it: one stored by a
    resume (fewer pairs) does not serve a whole run, which works the reuse out again,
    neither taking nor refusing the entry, with the same rows obtained the same way."""
    root = tmp_path / "small"
    (root / "plans").mkdir(parents=True)
    (root / "plans" / "small.yaml").write_text(REUSING_PLAN)
    drawn_and_frozen(root)
    _run(root)
    rows, obtained = comparable(ledger(root)), _how_obtained(ledger(root))
    assert sum(reused > 0 for _, _, reused in obtained) >= 5  # the reuse is put to the test
    shutil.rmtree(root / "results" / "small")
    _run(root)
    assert _setup(root)["from_cache"]["reuse"] == len(_entries(root, "reuse")) == 2
    assert comparable(ledger(root)) == rows and _how_obtained(ledger(root)) == obtained
    (run,) = (root / "results" / "small").iterdir()
    lines = (run / "ledger.jsonl").read_bytes().splitlines(keepends=True)
    (run / "ledger.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    for path in _entries(root, "reuse"):
        path.unlink()
    _run(root)  # the resume stores each tool's entry for the pairs it had left
    stored = {pair_id for path in _entries(root, "reuse") for pair_id in _entry(path)["value"]}
    assert 0 < len(stored) < len(rows)
    shutil.rmtree(root / "results" / "small")
    again = _run(root)
    assert not refusals(again.stderr), again.stderr
    setup = _setup(root)
    assert setup["computed"].get("reuse") == len(_entries(root, "reuse"))
    assert "reuse" not in setup["from_cache"] and "reuse" not in setup["refused"]
    assert comparable(ledger(root)) == rows and _how_obtained(ledger(root)) == obtained


def _setup(root: Path) -> dict:
    """The one start's `setup` entry of the run folder's run.json."""
    (folder,) = (root / "results" / "small").iterdir()
    (setup,) = json.loads((folder / "run.json").read_text())["setup"]
    return setup


def test_a_pairs_reuse_reads_back_as_it_was_stored_and_nothing_else_decodes() -> None:
    table = {
        "p1": Reuse(2, 1, frozenset({"t2", "t1"}), True),
        "p2": NOTHING,
        "p3": Reuse(0, 0, frozenset({"t1"}), False),
    }
    stored = pair_scoring._reuse_entries(table)
    assert stored["p1"] == [2, 1, ["t1", "t2"], True]
    assert pair_scoring._reuse_table(json.loads(json.dumps(stored))) == table
    for bad in (
        [],
        {"p": [True, 0, [], False]},  # a count that is a bool
        {"p": [0, 0, [1], False]},  # a task that is not a name
        {"p": [0, 0, [], 0]},  # a checker flag that is not a bool
        {"p": [0, 0, []]},
    ):
        with pytest.raises(ValueError):
            pair_scoring._reuse_table(bad)


def test_a_tampered_entry_is_refused_recomputed_and_named(cached_project) -> None:
    root, rows = cached_project
    path = _entries(root, "observations")[0]
    entry = _entry(path)
    first = entry["value"]["items"][0]
    first["success"] = not first["success"]  # digest left as it was
    path.write_text(json.dumps({"key": entry["key"], "sha256": entry["sha256"]}) + "\n")
    with path.open("a") as handle:
        handle.write(json.dumps(entry["value"], sort_keys=True, separators=(",", ":")) + "\n")
    shutil.rmtree(root / "results" / "small")
    again = _run(root)
    assert f"set-up cache: {path}: its value does not match its digest; recomputed" in (
        again.stderr
    )
    assert comparable(ledger(root)) == rows  # the tampered observation was never used
    fixed = _entry(path)  # rewritten from the recomputation
    assert fixed["value"]["items"][0]["success"] != first["success"]
    cache = SetupCache(path.parent, fixed["key"]["freeze_id"])
    assert cache.get("observations", _parts(fixed), dict) == fixed["value"]


def _entry(path: Path) -> dict:
    """An entry's two lines: its key and digest, then its value."""
    head, value = path.read_text().splitlines()
    return json.loads(head) | {"value": json.loads(value)}


def test_an_entry_is_its_key_and_digest_then_its_value_as_read(cached_project) -> None:
    """The digest is that of the value's bytes as stored: checked without encoding again."""
    root, _ = cached_project
    for path in _entries(root, "baseline") + _entries(root, "observations"):
        head, value = path.read_bytes().splitlines()
        assert json.loads(head)["sha256"] == hashlib.sha256(value).hexdigest()


def _parts(entry: dict) -> dict:
    return {k: v for k, v in entry["key"].items() if k not in ("schema", "freeze_id", "kind")}


# Run in a fresh interpreter: what an earlier test left in this process (a Dask cluster's
# run, say) must not decide what this one measures; the script prints what the parent ran.
RESUME = """
import json, os, sys
from pathlib import Path
import harness.execution.pair_scoring as pair_scoring
from harness.checker import ReferenceChecker
from harness.execution.runner import execute
parent, ran, warming = os.getpid(), [], []
def counted(name, function):
    def wrapper(*args, **kwargs):
        # a pair's child forks: not set-up; the warm-up after a cached set-up runs one run
        # of each kind for the pairs to inherit (`pair_scoring._warm_up`)
        if os.getpid() == parent and not warming:
            ran.append(name)
        return function(*args, **kwargs)
    return wrapper
original_warm_up = pair_scoring._warm_up
def warm_up(*args, **kwargs):
    warming.append(True)
    try:
        return original_warm_up(*args, **kwargs)
    finally:
        warming.pop()
pair_scoring._warm_up = warm_up
pair_scoring.observe = counted("observe", pair_scoring.observe)
pair_scoring._record = counted("record", pair_scoring._record)
pair_scoring._reuse = counted("reuse", pair_scoring._reuse)
ReferenceChecker.check = counted("check", ReferenceChecker.check)
result = execute(Path(sys.argv[1]), workers=1)
print(json.dumps({"ran": ran, "skipped": result.skipped, "scored": result.scored}))
"""


def test_a_resume_reaches_its_rows_with_no_set_up_run(cached_project) -> None:
    root, rows = cached_project
    (run,) = (root / "results" / "small").iterdir()
    lines = (run / "ledger.jsonl").read_bytes().splitlines(keepends=True)
    (run / "ledger.jsonl").write_bytes(b"".join(lines[:2]))  # a run stopped after 2 rows
    for name in ("baseline.json", "coverage.json"):  # the run folder's own caches gone too
        (run / name).unlink()
    done = subprocess.run(
        [sys.executable, "-c", RESUME, str(root / "plans" / "small.yaml")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": "0"},  # the seed the cache was written under
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["skipped"] == 2 and seen["scored"] == len(rows) - 2
    assert seen["ran"] == [], done.stderr[-2000:]
    assert not refusals(done.stderr), done.stderr
    assert comparable(ledger(root)) == rows


def test_states_are_cached_by_their_parts_each_distinct_part_once() -> None:
    """`shared` writes each distinct part of the states once; `unshared` gives back equal
    observations whose repeated parts are one object."""
    users = {"ann": {"age": 3}, "bob": {"age": 4}}
    after = {"users": {"ann": {"age": 5}, "bob": {"age": 4}}, "n": 1}
    items = [
        {"success": True, "post": {"users": users, "n": 1}, "after_reset": {"users": users}},
        {"success": False, "post": after, "after_reset": {"users": users}},
    ]
    value = shared(items, ("post", "after_reset"))
    assert value["parts"] == [{"age": 3}, {"age": 4}, 1, {"age": 5}]
    assert json.loads(json.dumps(value)) == value  # what the cache stores, read back
    back = unshared(json.loads(json.dumps(value)), ("post", "after_reset"))
    assert back == items
    assert back[0]["post"]["users"]["bob"] is back[1]["post"]["users"]["bob"]
    with pytest.raises(ValueError, match="not a shared part"):
        unshared({"parts": [], "items": [{"post": {"x": 1}}]}, ("post",))
    with pytest.raises(IndexError):
        unshared({"parts": [], "items": [{"post": {"s": 0}}]}, ("post",))


def test_an_object_met_again_is_written_out_once(monkeypatch) -> None:
    """A record object that recurs in many states (tau2's untouched records) is the same
    part without its JSON written out again; an equal copy is still compared by its JSON,
    and the value is the one written out every time."""
    from harness.execution import setup_cache

    written: list[object] = []
    canonical = setup_cache._canonical

    def counted(value):
        written.append(value)
        return canonical(value)

    monkeypatch.setattr(setup_cache, "_canonical", counted)
    record, copy = {"age": 3}, {"age": 3}
    items = [{"post": {"users": {"ann": record, "n": i}}} for i in range(50)]
    items.append({"post": {"users": {"ann": copy}}})
    value = shared(items, ("post",))
    assert value["parts"] == [{"age": 3}, *range(50)]
    assert [w for w in written if isinstance(w, dict)] == [record, copy]
    assert unshared(json.loads(json.dumps(value)), ("post",)) == items


def test_parts_equal_in_json_but_not_in_python_stay_apart_and_the_entry_is_refused(
    tmp_path: Path,
) -> None:
    """A list and an equal tuple (or {"1": x} and {1: x}) are one part in JSON but two for
    the harness's equality: `shared` keeps them apart, so `put` sees that JSON would change
    the value and stores nothing, instead of giving back a state that was never observed."""
    for first, second in (([1, 2], (1, 2)), ({"1": "x"}, {1: "x"})):
        items = [{"post": {"a": {"b": first}}}, {"post": {"a": {"b": second}}}]
        value = shared(items, ("post",))
        assert value["parts"] == [first, second]
        assert unshared(value, ("post",)) == items
        cache = SetupCache(tmp_path / "cache", "f")
        cache.put("observations", {"t": 1}, value)
        assert cache.stored == {} and not (tmp_path / "cache").exists()


def test_observations_that_are_not_json_are_scored_but_not_cached(tmp_path, monkeypatch) -> None:
    """A state holding NaN or a set cannot be cached; storing it is skipped, not an error."""
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    ctx = SimpleNamespace(setup=SetupCache(tmp_path / "cache", "f"))
    for state in ({"a": float("nan")}, {"a": {1, 2}}):
        observed = [{"post": state, "after_reset": {}}]
        pair_scoring._store(ctx, "observations", {"t": 1}, observed, _shared_observations)
    assert ctx.setup.stored == {} and not (tmp_path / "cache").exists()


TWO_TARGETS = """
schema_version: 1
name: two
description: two targets, for the order of warm-ups after a cached set-up
seed: 7
timeout_seconds: 30
liveness_probes_per_tool: 4
arms:
  - name: toy
    kind: closed_world
    target: toy_domain
    tools: [deposit, transfer]
    operators: [M-PRECOND, M-IGNARG]
    draw_per_operator: 2
  - name: message
    kind: open_world
    target: bfcl-message
    tools: [send_message]
    operators: ["CR-core/ReplaceComparisonOperator_Eq_NotEq", "CR-core/NumberReplacer"]
    draw_per_operator: 2
"""

# What the runner's process does, in order, in a fresh interpreter (as RESUME): each fork
# (an at-fork hook), each target warmed, each row and whether a child scored it.
WARM_ORDER = """
import json, os, sys
from pathlib import Path
import harness.execution.executors as executors
import harness.execution.pair_scoring as pair_scoring
from harness.execution.runner import execute
events = []
os.register_at_fork(before=lambda: events.append(["fork"]))
original_warm_up, original_score_pairs = pair_scoring._warm_up, executors.score_pairs
def warm_up(ctx, keys):
    events.append(["warm", sorted({name for name, _ in keys})])
    return original_warm_up(ctx, keys)
def score_pairs(ctx, pairs, workers, on_outcome):
    here = {p.pair_id for p in pairs if getattr(ctx.reuse.get(p.pair_id), "everything", False)}
    def counted(outcome):
        events.append(["row", outcome.pair_id not in here])
        return on_outcome(outcome)
    return original_score_pairs(ctx, pairs, workers, counted)
pair_scoring._warm_up, executors.score_pairs = warm_up, score_pairs
execute(Path(sys.argv[1]), workers=int(sys.argv[2]))
print(json.dumps(events))
"""


def _events(root: Path, workers: int) -> list[list]:
    done = subprocess.run(
        [sys.executable, "-c", WARM_ORDER, str(root / "plans" / "two.yaml"), str(workers)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_cached_run_warms_each_target_before_its_first_child_with_no_pair_scored(
    tmp_path,
) -> None:
    """After a cached set-up the runner warms a target just before forking the first child
    that scores one of its pairs, not every target before the first pair, and only while
    no child is scoring a pair (a warm-up takes seconds, and the runner must keep watching
    its children's answers, timeouts and memory). Each target once, in the same order
    whatever the worker count, with the rows of a run that computed its set-up in its own
    process (which leaves every target warm, and warms nothing). A first run with two
    workers has its set-up computed by helper processes (`setup_helpers`) and read back,
    so it warms each target as a rerun does."""
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "two.yaml").write_text(TWO_TARGETS)
    for command in ("draw", "freeze"):
        assert harness(command, "plans/two.yaml", cwd=tmp_path).returncode == 0
    uncached = _events(tmp_path, 1)
    rows = comparable(ledger(tmp_path, "two"))
    assert not [e for e in uncached if e[0] == "warm"]
    shutil.rmtree(tmp_path / "results")  # the set-up cache too: helpers compute it
    helped = _events(tmp_path, 2)
    assert comparable(ledger(tmp_path, "two")) == rows
    assert [e[1] for e in helped if e[0] == "warm"] == [["toy_domain"], ["bfcl-message"]]
    for workers in (1, 2):
        shutil.rmtree(tmp_path / "results" / "two")  # the set-up cache kept
        events = _events(tmp_path, workers)
        assert comparable(ledger(tmp_path, "two")) == rows
        warms = [i for i, event in enumerate(events) if event[0] == "warm"]
        assert [events[i][1] for i in warms] == [["toy_domain"], ["bfcl-message"]]
        assert warms[0] == 0  # before the first fork
        for i in warms:
            assert events[i + 1] == ["fork"]  # the child its warm-up was for
            forks = sum(1 for event in events[:i] if event == ["fork"])
            assert forks == sum(1 for event in events[:i] if event == ["row", True])


def test_a_cached_coverage_record_too_narrow_is_counted_once_as_computed(
    cached_project,
) -> None:
    """A sound coverage entry made for fewer sites than the pairs have is recomputed, and
    run.json's `setup` counts it as computed only (it used to count it as read too)."""
    root, rows = cached_project
    path = _entries(root, "coverage")[0]
    entry = _entry(path)
    entry["value"]["sites"] = []  # made for no site: it serves none of this tool's pairs
    value = json.dumps(entry["value"], sort_keys=True, separators=(",", ":"), allow_nan=False)
    head = {"key": entry["key"], "sha256": hashlib.sha256(value.encode()).hexdigest()}
    path.write_text(json.dumps(head, sort_keys=True, separators=(",", ":")) + "\n" + value + "\n")
    shutil.rmtree(root / "results" / "small")
    again = _run(root)
    assert not refusals(again.stderr), again.stderr  # sound: never refused
    assert comparable(ledger(root)) == rows
    (folder,) = (root / "results" / "small").iterdir()
    (setup,) = json.loads((folder / "run.json").read_text())["setup"]
    assert setup["computed"] == {"coverage": 1} and setup["stored"] == {"coverage": 1}
    assert setup["from_cache"]["coverage"] == len(_entries(root, "coverage")) - 1
    assert _entry(path)["value"]["sites"]  # rewritten for the sites its pairs have


def test_an_entry_that_does_not_serve_is_neither_taken_nor_refused(tmp_path) -> None:
    """A sound coverage record narrower than the pairs need is recomputed: `get` gives None
    and counts it nowhere, so run.json's `setup` counts it once, as computed."""
    cache = SetupCache(tmp_path / "cache", "f")
    cache.put("coverage", {"tool": "t"}, {"functions": ["a"]})
    wide = cache.get("coverage", {"tool": "t"}, dict, lambda found: "b" in found["functions"])
    assert wide is None and cache.hits == {} and cache.rejected == {}
    assert cache.get("coverage", {"tool": "t"}, dict, lambda found: "a" in found["functions"])
    assert cache.hits == {"coverage": 1}


RETAIL_CALL = {
    "user_id": "ethan_garcia_1261",
    "address1": "1 A St",
    "address2": "",
    "city": "X",
    "state": "NY",
    "country": "USA",
    "zip": "10001",
}


def _shared_with(observations: list[dict], fresh: dict) -> list[tuple[str, str, str]]:
    """(state, table, key) of every record of `observations` that is the very object of
    the snapshot `fresh`."""
    return [
        (state, table, key)
        for o in observations
        for state in pair_scoring.STATE_FIELDS
        for table, records in o[state].items()
        if isinstance(records, dict)
        for key, record in records.items()
        if fresh.get(table, {}).get(key) is record
    ]


def test_cached_tau2_observations_share_the_fresh_records_as_computed_ones_do() -> None:
    """tau2 snapshots share untouched records with the pristine database, and a comparison
    takes a shared record as equal by identity. The cache writes each such record as a
    reference to the fresh snapshot's, and reads it back as that very object; a record
    written as a copy (the entry format before) is linked back by comparison; the record
    the call changed stays a copy."""
    pytest.importorskip("inspect_evals.tau2")
    from harness.execution.liveness import observe
    from harness.targets.registry import load_target

    target = load_target("tau2-retail")
    computed = observe(target.adapter, "modify_user_address", [RETAIL_CALL])
    fresh = target.adapter.snapshot(target.adapter.fresh())
    shared_computed = _shared_with(computed, fresh)
    assert len(shared_computed) > 100  # every order, product and untouched user
    pristine = pair_scoring._pristine({}, target)
    assert pristine.digest == content_digest(fresh)
    stored = json.loads(json.dumps(_shared_observations(computed, pristine)))
    references = json.dumps(stored).count('{"f": 1}')
    assert references == len(shared_computed)
    with pytest.raises(ValueError):  # a reference means nothing without the fresh records
        pair_scoring._observations(stored)
    decoded = pair_scoring._observations(stored, pristine)
    assert decoded == computed
    assert _shared_with(decoded, fresh) == shared_computed
    changed = decoded[0]["post"]["users"]["ethan_garcia_1261"]
    assert changed["address"]["city"] == "X" and changed is not fresh["users"]["ethan_garcia_1261"]
    copies = json.loads(json.dumps(_shared_observations(computed)))  # no references
    assert '{"f": 1}' not in json.dumps(copies)
    assert _shared_with(pair_scoring._observations(copies), fresh) == []
    linked = pair_scoring._observations(copies, pristine)
    assert linked == computed and _shared_with(linked, fresh) == shared_computed
    # the Dask host's copies (pickled by the client) are linked the same way
    host = SimpleNamespace(targets={target.name: target})
    prepared = pickle.loads(
        pickle.dumps(
            pair_scoring.PreparedSetup.of(
                SimpleNamespace(
                    baselines={},
                    observations={(target.name, "modify_user_address"): computed},
                    grades={},
                    skip_by_coverage=False,
                    evaluation_keys={},
                    evaluations={},
                    reuse={},
                )
            )
        )
    )
    prepared.into(host)
    assert _shared_with(host.observations[(target.name, "modify_user_address")], fresh) == (
        shared_computed
    )


def test_a_record_that_differs_or_is_not_equal_to_itself_is_not_relinked() -> None:
    """Only a record `canonical_equal` to the fresh one is replaced by it: a changed record,
    an int where the fresh one has a float, a record holding NaN (never equal, so identity
    must not make it so), a record the fresh state lacks, and anything but a table of
    records stay as read; one decoded object at two keys is judged at each: by `_relinked`
    (the Dask host's copies) and by `_observations` (a cache entry's)."""
    fresh = {
        ("t", "a"): {"x": 1},
        ("t", "b"): {"x": 9},
        ("t", "f"): {"x": 1.0},
        ("t", "n"): {"x": float("nan")},
    }
    one = {"x": 1}
    state = {
        "t": {"a": one, "b": one, "f": {"x": 1}, "n": {"x": float("nan")}, "z": {"x": 0}},
        "n": 3,
    }
    read = [{"success": True, "post": state, "after_reset": {"reset_error": "KeyError"}}]
    (out,) = pair_scoring._relinked(read, fresh)
    post = out["post"]
    assert post["t"]["a"] is fresh[("t", "a")]
    assert post["t"]["b"] is one and post["t"]["f"] is state["t"]["f"]
    assert post["t"]["n"] is state["t"]["n"] and post["t"]["z"] is state["t"]["z"]
    assert post["n"] == 3 and out["after_reset"] == {"reset_error": "KeyError"}
    assert read[0]["post"]["t"]["a"] is one  # the observations read are not changed
    toy = pair_scoring._relinked(read, {})  # an adapter whose snapshot has no tables
    assert toy == read and toy[0]["post"]["t"]["a"] is one
    # a cache entry holding the same state, read back with the same fresh records
    parts = [one, {"x": 1}, {"x": float("nan")}, {"x": 0}, 3, "KeyError"]
    post_parts = {"a": 0, "b": 0, "f": 1, "n": 2, "z": 3}
    entry = {
        "parts": parts,
        "items": [
            {
                "success": True,
                "error_type": None,
                "result": None,
                "post": {
                    "d": {"t": {"d": {k: {"s": i} for k, i in post_parts.items()}}, "n": {"s": 4}}
                },
                "after_reset": {"d": {"reset_error": {"s": 5}}},
            }
        ],
    }
    (cached,) = pair_scoring._observations(entry, pair_scoring.Pristine(fresh, None))
    post = cached["post"]
    assert post["t"]["a"] is fresh[("t", "a")]
    assert post["t"]["b"] is one and post["t"]["f"] is parts[1]
    assert post["t"]["n"] is parts[2] and post["t"]["z"] is parts[3]
    assert post["n"] == 3 and cached["after_reset"] == {"reset_error": "KeyError"}


def test_a_record_of_the_fresh_snapshot_is_written_as_a_reference_and_read_back_as_it() -> None:
    """`shared` writes a record as {"f": 1} only when it is the very object the fresh
    records hold at its (table, key), not an equal copy; `unshared` reads the reference as
    that object, and refuses one to a record the fresh records lack, one above the records'
    depth, and one read without fresh records."""
    ann, bob = {"age": 3}, {"age": 4}
    fresh = {("users", "ann"): ann, ("users", "bob"): bob}
    items = [{"post": {"users": {"ann": ann, "bob": {"age": 4}, "cy": ann}, "n": 1}}]
    value = json.loads(json.dumps(shared(items, ("post",), fresh)))
    users = value["items"][0]["post"]["d"]["users"]["d"]
    assert users == {"ann": {"f": 1}, "bob": {"s": 0}, "cy": {"s": 1}}
    assert value["parts"] == [{"age": 4}, {"age": 3}, 1]
    (back,) = unshared(value, ("post",), fresh)
    assert back == items[0] and back["post"]["users"]["ann"] is ann
    assert back["post"]["users"]["bob"] is not bob  # a copy stays a copy without `link`
    with pytest.raises(ValueError, match="where none can be"):
        unshared(value, ("post",))
    with pytest.raises(ValueError, match="the fresh environment lacks"):
        unshared(value, ("post",), {("users", "bob"): bob})
    above = {"parts": [], "items": [{"post": {"d": {"users": {"f": 1}}}}]}
    with pytest.raises(ValueError, match="where none can be"):
        unshared(above, ("post",), fresh)
    for other in (True, 1.0, 2, "1"):  # equal to 1 in Python, or near it: not a reference
        bent = json.loads(json.dumps(value).replace('{"f": 1}', json.dumps({"f": other})))
        with pytest.raises(ValueError, match="not a shared part"):
            unshared(bent, ("post",), fresh)

"""The bench scripts' output names: a second sitting on the same day never replaces the first
one's files unasked (`--label` keeps both, `--replace` overwrites), and the refusal comes
before any work, as a one-line error with exit code 2."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_module(script: str):
    """bench/SCRIPT loaded as a module, bench/ on the path while it imports `common`."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{script[:-3]}", BENCH / script)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # as an import would (dataclasses look it up)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


def _common():
    return _bench_module("common.py")


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    _common().add_output_options(parser)
    return parser.parse_args(list(argv))


def test_a_free_name_is_the_plain_stem_and_a_label_ends_it(tmp_path: Path) -> None:
    common = _common()
    assert common.output_stem("overhead-2026-12-05-limit5", _args(), folder=tmp_path) == (
        tmp_path / "overhead-2026-12-05-limit5"
    )
    labelled = _args("--label", "v2.1")
    stem = common.output_stem("overhead-2026-12-05-limit5", labelled, folder=tmp_path)
    assert stem == tmp_path / "overhead-2026-12-05-limit5-v2.1"
    # the suffix is added, not put in place of ".1" (as `with_suffix` would)
    assert Path(f"{stem}.json").name == "overhead-2026-12-05-limit5-v2.1.json"


def test_an_earlier_sittings_file_is_refused_unless_labelled_or_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = _common()
    (tmp_path / "cached-pairs-2026-12-05.md").write_text("an earlier sitting\n")
    with pytest.raises(SystemExit) as stopped:
        common.output_stem("cached-pairs-2026-12-05", _args(), folder=tmp_path)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "cached-pairs-2026-12-05.md" in error
    assert "--label" in error and "--replace" in error
    assert (tmp_path / "cached-pairs-2026-12-05.md").read_text() == "an earlier sitting\n"
    labelled = common.output_stem("cached-pairs-2026-12-05", _args("--label", "b"), folder=tmp_path)
    assert labelled.name == "cached-pairs-2026-12-05-b"
    replaced = common.output_stem("cached-pairs-2026-12-05", _args("--replace"), folder=tmp_path)
    assert replaced == tmp_path / "cached-pairs-2026-12-05"
    # only the suffixes the script writes count: a .json-only script is free beside a .md
    assert common.output_stem("cached-pairs-2026-12-05", _args(), (".json",), folder=tmp_path)


@pytest.mark.parametrize("label", ["", "a b", "../x", "-x"])
def test_a_label_that_is_not_a_plain_name_is_refused(
    tmp_path: Path, label: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        _common().output_stem("trace-2026-12-05", _args(f"--label={label}"), folder=tmp_path)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.startswith("error: --label: ")
    assert list(tmp_path.iterdir()) == []


PUBLISHED = BENCH.parent / "results" / "reference" / "closed_world" / "a2b36cd357b3b4d2"


@pytest.mark.parametrize(
    ("script", "extra"),
    [
        ("overhead.py", []),
        ("cached_pairs.py", []),
        ("exhaustive.py", []),
        ("throughput.py", []),
        ("trace.py", []),
        ("bare_work.py", []),
        ("pool_time.py", [str(PUBLISHED)]),
        ("pool_dask.py", []),
        ("first_row.py", []),
        ("report_time.py", []),
        ("checker_memos.py", []),
        ("pair_time.py", ["--old", "HEAD"]),
    ],
)
def test_each_script_refuses_a_bad_label_before_any_work(script: str, extra: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *extra, "--label", "not plain"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""  # no load line, no project drawn: refused before the work
    assert done.stderr.strip().splitlines() == [
        "error: --label: 'not plain' is not a plain name; "
        "fix: use letters, digits, '.', '_' and '-' only"
    ]


def _bench(script: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / script), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=BENCH.parent,
    )


def test_pool_time_sums_a_published_runs_pair_time_by_target(tmp_path: Path) -> None:
    before = sorted((BENCH.parent / "results" / "bench").iterdir())
    done = _bench("pool_time.py", str(PUBLISHED), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    run = json.loads((PUBLISHED / "run.json").read_text())
    seconds: dict[str, float] = {}
    pairs: dict[str, int] = {}
    for line in (PUBLISHED / "ledger.jsonl").read_text().splitlines():
        row = json.loads(line)
        seconds[row["target"]] = seconds.get(row["target"], 0.0) + row["timing"]["seconds"]
        pairs[row["target"]] = pairs.get(row["target"], 0) + 1
    written = json.loads((tmp_path / f"pool-time-closed_world-{run['freeze_id']}.json").read_text())
    assert written["workers"] == run["workers"] and written["plan"] == "closed_world"
    targets = written["targets"]
    assert {t: v["pairs"] for t, v in targets.items()} == pairs
    assert {t: v["seconds"] for t, v in targets.items()} == pytest.approx(seconds, abs=0.006)
    shown = [t["seconds"] for t in targets.values()]
    assert shown == sorted(shown, reverse=True)  # the slowest target first
    table = (tmp_path / f"pool-time-closed_world-{run['freeze_id']}.md").read_text()
    assert f"{sum(pairs.values()):,} pairs" in table
    assert sum(line.startswith("| ") for line in table.splitlines()) == len(pairs) + 1
    assert sorted((BENCH.parent / "results" / "bench").iterdir()) == before


def test_pool_time_against_an_earlier_run_gives_the_shared_pairs_time_new_over_old(
    tmp_path: Path,
) -> None:
    """`--against`: per target, the pairs both ledgers hold and their time here over there
    (hand-computed: toy 3 s against 2 s on two shared pairs, a third pair only here; tau2
    1 s against 4 s; a pair whose id names another target there is not shared; all 4 s
    against 6 s)."""

    def run(name: str, rows: list[tuple[str, str, float]]) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "run.json").write_text(json.dumps({"plan": "p", "freeze_id": name, "workers": 2}))
        (folder / "ledger.jsonl").write_text(
            "".join(
                json.dumps({"pair_id": i, "target": t, "timing": {"seconds": s}}) + "\n"
                for i, t, s in rows
            )
        )
        return folder

    new = run(
        "new",
        [
            ("a", "toy", 1.0),
            ("b", "toy", 2.0),
            ("c", "toy", 5.0),
            ("d", "tau2", 1.0),
            ("e", "tau2", 7.0),
        ],
    )
    old = run("old", [("a", "toy", 0.5), ("b", "toy", 1.5), ("d", "tau2", 4.0), ("e", "toy", 1.0)])
    done = _bench("pool_time.py", str(new), "--against", str(old), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    shared = json.loads((tmp_path / "pool-time-p-new.json").read_text())["shared"]
    assert {k: (v["pairs"], v["ratio"]) for k, v in shared.items()} == {
        "toy": (2, 1.5),
        "tau2": (1, 0.25),
        "all": (3, 0.667),
    }
    table = (tmp_path / "pool-time-p-new.md").read_text().splitlines()
    assert table[-3:] == [
        "| toy | 3 | 8.0 | 2.667 | 50.0% | 2 | 1.50 |",
        "| tau2 | 2 | 8.0 | 4.000 | 50.0% | 1 | 0.25 |",
        "| all | 5 | 16.0 | | | 3 | 0.67 |",
    ]
    missing = _bench("pool_time.py", str(new), "--against", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.startswith(
        f"error: {tmp_path / 'nowhere' / 'ledger.jsonl'}: not found"
    )


def test_bare_work_profiles_each_paired_tool_of_a_target(tmp_path: Path) -> None:
    from harness.execution.draw import load_corpus
    from harness.execution.plan import load_plan

    plan_path = BENCH.parent / "plans" / "closed_world.yaml"
    corpus = load_corpus(BENCH.parent, load_plan(plan_path))
    tools = {p.tool for p in corpus.pairs if p.mutant.target == "toy_domain"}
    before = sorted((BENCH.parent / "results" / "bench").iterdir())
    done = _bench(
        "bare_work.py", "--plan", str(plan_path), "--target", "toy_domain", "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    [json_file] = tmp_path.glob("bare-work-toy_domain-*.json")
    report = json.loads(json_file.read_text())
    by_tool = report["seconds_by_tool"]
    assert set(by_tool) == tools
    for kind, total in report["seconds_by_kind"].items():
        assert total == pytest.approx(sum(s[kind] for s in by_tool.values()), abs=0.01)
    assert all(s["checker"] > 0 and s["liveness"] > 0 for s in by_tool.values())
    assert report["seconds_by_kind"]["grader"] == 0  # the toy domain has no grader
    assert max(report["own_seconds_by_package"], key=report["own_seconds_by_package"].get) == (
        "harness"  # a toy tool is the harness's own code
    )
    assert json_file.with_suffix(".md").read_text().count("\n") > len(tools)
    assert sorted((BENCH.parent / "results" / "bench").iterdir()) == before


def test_an_out_folder_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    done = _bench("pool_time.py", str(PUBLISHED), "--out", str(tmp_path / "missing"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: --out: {tmp_path / 'missing'} is not a folder; fix: create it first"
    ]


def test_the_overhead_is_given_against_the_bare_work_before_and_after_the_runs() -> None:
    """bench/overhead.py's per-family ratio against the bare work timed before the runs and
    again after them, and the drift between the two (hand-computed: toy pairs of 0.3 s and
    0.1 s against 0.2 s and 0.1 s of bare work before, 0.25 s and 0.15 s after)."""
    overhead = _bench_module("overhead.py")

    class Row:
        def __init__(self, tool: str, seconds: float) -> None:
            self.target, self.tool = "toy_domain", tool
            self.timing = argparse.Namespace(seconds=seconds)

    before = {("toy_domain", "a"): (0.2, 0.1), ("toy_domain", "b"): (0.1, 0.05)}
    after = {("toy_domain", "a"): (0.25, 0.1), ("toy_domain", "b"): (0.15, 0.05)}
    entry = overhead.overheads([Row("a", 0.3), Row("b", 0.1)], before, after)["toy_domain"]
    assert entry["pairs"] == 2
    assert entry["overhead_vs_bare_work"] == round(0.4 / 0.3, 2) == 1.33
    assert entry["overhead_vs_bare_work_after"] == round(0.4 / 0.4, 2) == 1.0
    assert entry["bare_work_drift"] == round(0.4 / 0.3, 2) == 1.33
    assert entry["bare_work_s"] == 0.3 and entry["bare_work_after_s"] == 0.4
    assert entry["pair_over_checker_run"] == round(0.4 / 0.15, 2)


@pytest.mark.parametrize(
    ("plan", "said"),
    [
        ("/nonexistent/plan.yaml", "error: --plan: /nonexistent/plan.yaml is not a plan file"),
        (str(BENCH.parent / "README.md"), f"error: {BENCH.parent / 'README.md'}: line 6: "),
    ],
    ids=["outside", "not-a-plan"],
)
@pytest.mark.parametrize("script", ["pool_dask.py", "first_row.py"])
def test_a_repository_plan_bench_refuses_a_bad_plan_in_one_line(
    script: str, plan: str, said: str
) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--plan", plan],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(said), line


def test_first_row_refuses_an_unknown_revision_before_any_work() -> None:
    done = _bench("first_row.py", "--against", "no-such-revision")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: --against: 'no-such-revision' is no commit of this repository; "
        "fix: give a commit, tag or branch"
    ]


def test_first_row_refuses_a_revision_without_the_plan_before_any_work() -> None:
    root = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[0]
    short = subprocess.run(
        ["git", "rev-parse", "--short", root],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    done = _bench("first_row.py", "--against", root)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: --against: plans/closed_world_all.yaml does not exist at {short}; "
        "fix: give a revision where the plan is frozen"
    ]


def test_set_up_steps_reads_a_real_runs_own_set_up_lines(tmp_path: Path) -> None:
    """bench/common.py's `set_up_steps` on the stderr of a real `harness run` (the formats
    `harness/execution/runner.py` and `pair_scoring.py` print): each step's seconds found;
    on text without them, None each; of two runs' lines, the last."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_runner import drawn_and_frozen, harness, project

    common = _common()
    root = project(tmp_path, per_operator=1)
    drawn_and_frozen(root)
    done = harness("run", "plans/small.yaml", cwd=root)
    assert done.returncode == 0, done.stderr
    steps = common.set_up_steps(done.stderr)
    assert set(steps) == {"targets_loaded_s", "freeze_verified_s", "set_up_done_s"}
    assert all(isinstance(v, float) and v >= 0 for v in steps.values()), (steps, done.stderr)
    assert common.set_up_steps("scoring 4 of 4 pairs\n") == dict.fromkeys(steps)
    two = (
        "set-up: 2 targets loaded in 7.2 s; verifying the freeze\n"
        "set-up: freeze 0123456789abcdef verified: 8,166 hashes in 0.9 s\n"
        "set-up: done in 2.5 s; baseline 3 from the set-up cache\n"
        "set-up: 1 target loaded in 0.6 s; verifying the freeze\n"
    )
    assert common.set_up_steps(two) == {
        "targets_loaded_s": 0.6,
        "freeze_verified_s": 0.9,
        "set_up_done_s": 2.5,
    }
    assert common.steps_said(common.set_up_steps(two)) == (
        "targets loaded 0.60 s, freeze verified 0.90 s, original tools prepared 2.50 s"
    )
    assert "not said" in common.steps_said(dict.fromkeys(steps))


def test_first_row_stops_each_start_at_its_first_row_and_the_second_reads_the_set_up_cache(
    tmp_path: Path,
) -> None:
    """bench/first_row.py's rounds on a scratch project (the toy plan, frozen, 1 worker): each
    start is stopped by SIGINT at its ledger's first whole row (exit 130) or ends first
    (exit 0) with a row; the computed start says it computed the set-up and the cached one
    that it read it from the cache the first wrote, and their ratios are the ratios of the
    seconds reported."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_runner import drawn_and_frozen, project

    first_row = _bench_module("first_row.py")
    root = project(tmp_path, per_operator=2)
    drawn_and_frozen(root)
    freeze_id = freeze_id_of(root)
    said: list[str] = []
    real = first_row.start_to_first_row

    def spy(*args, **kwargs):
        start = real(*args, **kwargs)
        ledger = next((root / "results" / "small").glob("*/ledger.jsonl"))
        rows = ledger.read_bytes().splitlines()
        said.append(f"{start['exit_code']} {len(rows)}")
        return start

    first_row.start_to_first_row = spy
    collector = tmp_path / "collector"
    collector.mkdir()
    (collector / "sitecustomize.py").write_text(first_row.COLLECTOR_SITECUSTOMIZE)
    (entry,) = first_row.rounds_in(
        root, Path("plans/small.yaml"), "small", freeze_id, 1, 1, memory=True, collector=collector
    )
    assert all(code in ("130", "0") and int(rows) >= 1 for code, rows in map(str.split, said))
    assert (root / "results" / ".setup-cache" / freeze_id).is_dir()
    computed, cached = entry["computed"], entry["cached"]
    assert (
        computed["set_up"].endswith(" computed")
        and "from the set-up cache" not in (computed["set_up"])
    ), computed["set_up"]
    assert cached["set_up"].endswith("from the set-up cache"), cached["set_up"]
    for start in (computed, cached):
        assert start["peak_pss_mib"] > 10  # an interpreter with the harness loaded, at least
        # the collector timed until the first pair's child was forked (1 worker: no helper)
        spent = start["collector"]
        assert spent["until"] == "first fork" and 0 < spent["at_s"] < start["first_row_s"]
        assert spent["collections"][0] > 0, spent
        assert abs(spent["seconds"] - sum(spent["by_generation_s"])) < 0.002, spent
        assert start["first_row_s"] > 0 and set(start["steps"]) == {
            "targets_loaded_s",
            "freeze_verified_s",
            "set_up_done_s",
        }
    assert entry["first_row_cached_over_computed"] == round(
        cached["first_row_s"] / computed["first_row_s"], 3
    )
    preparation = dict(computed["preparation_s"])
    assert preparation.pop("helpers") is None  # one target, one worker: no helper
    for step, seconds in preparation.items():  # each said, in its order
        assert isinstance(seconds, float) and seconds >= 0, (step, computed)
    stamped = [
        (1.0, "set-up: 1 target loaded in 0.5 s\n"),
        (1.5, "set-up: helpers: 2 targets' original tools prepared in 2 processes, into …\n"),
        (1.75, "set-up: helpers: done in 0.2 s\n"),
        (2.0, "set-up: baselines: the checker on each original tool (3 tools)\n"),
        (2.5, "set-up: liveness calls on the original tools\n"),
        (4.0, "set-up: coverage: what each original tool's runs start\n"),
        (4.25, "set-up: done in 2.3 s; baseline 3 computed\n"),
    ]
    assert first_row.step_seconds(stamped) == {
        "helpers": 0.25,  # from its first line to the next: "done" is no step of its own
        "baselines": 0.5,
        "liveness": 1.5,
        "grader": None,  # not said: a target without a grader
        "coverage": 0.25,
    }
    prepared = cached["steps"]["set_up_done_s"], computed["steps"]["set_up_done_s"]
    if prepared[1]:  # "done in 0.0 s" on a fast machine leaves no ratio
        assert entry["set_up_cached_over_computed"] == round(prepared[0] / prepared[1], 3)


def test_first_row_profiles_a_cached_start_and_names_the_harness_functions_it_timed(
    tmp_path: Path,
) -> None:
    """bench/first_row.py --profile's start on a scratch project (the toy plan, frozen, 1
    worker): it runs under cProfile to a first row, and the functions it names are the
    harness's own, most cumulative seconds first, the set-up among them, run once."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_runner import drawn_and_frozen, project

    first_row = _bench_module("first_row.py")
    root = project(tmp_path, per_operator=2)
    drawn_and_frozen(root)
    # a round first, as the bench runs them: the profiled start reads the set-up it cached
    # (on 3.11 the coverage recorder is a sys.setprofile hook, which cProfile's would replace)
    first_row.rounds_in(root, Path("plans/small.yaml"), "small", freeze_id_of(root), 1, 1)
    start = first_row.profiled_start(root, Path("plans/small.yaml"), "small", 1, 400)
    assert start["exit_code"] == 0 and start["first_row_s"] > 0  # cProfile ends with 0
    ledger = next((root / "results" / "small").glob("*/ledger.jsonl"))
    assert ledger.read_bytes().count(b"\n") >= 1
    found = start["profile"]
    assert 0 < len(found) <= 400
    assert all(row["function"].startswith("harness/") for row in found), found[:3]
    seconds = [row["cumulative_s"] for row in found]
    assert seconds == sorted(seconds, reverse=True)
    (context,) = [row for row in found if row["function"].endswith("(complete_context)")]
    assert context["calls"] == 1 and 0 <= context["own_s"] <= context["cumulative_s"]
    (execute,) = [row for row in found if row["function"].endswith("(execute)")]
    assert execute["cumulative_s"] >= context["cumulative_s"]


def freeze_id_of(root: Path) -> str:
    return json.loads((root / "plans" / "small.freeze.json").read_text())["freeze_id"]


def test_same_rows_says_how_each_row_was_obtained_apart_from_the_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench/same_rows.py: two ledgers whose rows say the same but two of which were obtained
    otherwise (runs reused, one scored from the original alone) are identical, exit 0, and
    the line on how rows were obtained counts each difference."""
    from harness.execution.ledger import read_rows

    fixture = Path(__file__).resolve().parent / "fixtures" / "example_run" / "ledger.jsonl"
    rows = list(read_rows(fixture))
    changed = [
        rows[0].model_copy(update={"reused_runs": 3}),
        rows[1].model_copy(update={"skipped_by_coverage": True, "reused_runs": 5}),
        *rows[2:],
    ]
    for name, ledger in (("old", rows), ("new", changed)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ledger.jsonl").write_text(
            "".join(row.model_dump_json() + "\n" for row in ledger)
        )
    same_rows = _bench_module("same_rows.py")
    assert same_rows.main([str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[-2] == "IDENTICAL"
    assert said[-1] == (
        f"obtained the same way: {len(rows) - 2} of {len(rows)}; "
        "old: 0 with reused runs, 0 from the original alone; "
        "new: 2 with reused runs, 1 from the original alone"
    )


SHARING = """
import os, sys, time
block = bytearray(os.urandom(1 << 20)) * 160  # 160 MiB, every page written
if os.fork() == 0:
    time.sleep(60)  # the child shares the block with its parent, writing none of it
    os._exit(0)
print("ready", flush=True)
time.sleep(60)
"""


def test_tree_pss_counts_a_page_two_processes_share_once() -> None:
    """bench/common.tree_pss_mib sums PSS over a process and its descendants: a block a
    forked child still shares with its parent counts once, where their RSS counts it
    twice (what `first_row.py --memory` reports as a run's memory with its helpers)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from common import tree_pss_mib

    from harness.execution.isolation import children_of

    process = subprocess.Popen([sys.executable, "-c", SHARING], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        (child,) = children_of(process.pid)
        rss = sum(
            int(line.split()[1])
            for pid in (process.pid, child)
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("VmRSS:")
        )
        assert rss / 1024 > 2 * 160  # the block, once in each process's RSS
        assert 160 < tree_pss_mib(process.pid) < 160 + 60  # once in the sum of PSS
    finally:
        for pid in children_of(process.pid):
            os.kill(pid, signal.SIGKILL)
        process.kill()
        process.wait()


def test_pair_time_scores_the_same_pairs_with_both_harnesses(tmp_path: Path) -> None:
    """Two toy pairs of the exhaustive open world, scored by the harness of HEAD on both
    sides (the bench's control): a ratio for each, and the same scores from both."""
    done = _bench(
        "pair_time.py",
        *("--old", "HEAD", "--targets", "toy_domain", "--per-target", "2", "--repeat", "1"),
        *("--out", str(tmp_path)),
    )
    assert done.returncode == 0, done.stderr
    assert "scores the same, old and new: 2 of 2 pairs" in done.stdout
    (found,) = tmp_path.glob("pair-time-*.json")
    report = json.loads(found.read_text())
    toy = report["families"]["toy_domain"]
    assert toy["pairs"] == 2 and toy["old_s"] > 0 and toy["new_s"] > 0
    assert report["same_scores"] == 2 and report["old"]["rev"] == report["new"]["rev"] == "HEAD"
    table = found.with_suffix(".md").read_text().splitlines()
    assert sum(line.startswith("toy_domain ") for line in table) == 2  # target and family


def test_the_collector_log_sums_the_collections_in_its_window_only() -> None:
    """bench/common.py's `CollectorLog`: a full collection forced inside a window is counted
    there, and not in a window before it; the callback is gone once the log is closed."""
    import gc
    import time

    common = _common()
    with common.CollectorLog() as log:
        before = time.perf_counter()
        gc.collect()
        gc.collect()
        after = time.perf_counter()
    assert log._timed not in gc.callbacks
    inside = log.within(before, after)
    assert inside["full"] == 2 and inside["seconds"] > 0
    assert log.within(0.0, before)["full"] == 0
    logged = len(log.runs)
    gc.collect()
    assert len(log.runs) == logged

"""The runner as users run it (`harness draw/freeze/run` in a project folder), with faults."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

import toy_domain
from harness.execution.draw import Corpus, DrawnPair, write_corpus
from harness.execution.ledger import LedgerRow, read_rows
from harness.execution.plan import load_plan
from harness.mutation.enumerate import unified_diff
from harness.mutation.model import Arm, FunctionSite, Mutant, mutant_id
from harness.mutation.sites import tool_sites
from harness.targets.adapter import Adapter
from harness.targets.registry import load_target

SMALL_PLAN = """
schema_version: 1
name: {name}
description: a small plan for tests
seed: 7
timeout_seconds: {timeout}
liveness_probes_per_tool: 4
arms:
  - name: closed_world
    kind: closed_world
    target: toy_domain
    tools: [deposit, transfer, reserve_item, release_reservation, update_item]
    operators: [M-PHANTOM, M-PRECOND, M-IGNARG, M-PARTIAL]
    draw_per_operator: {per_operator}
"""


def harness(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def project(
    tmp_path: Path, name: str = "small", timeout: float = 20, per_operator: int = 3
) -> Path:
    root = tmp_path / name
    (root / "plans").mkdir(parents=True)
    (root / "plans" / f"{name}.yaml").write_text(
        SMALL_PLAN.format(name=name, timeout=timeout, per_operator=per_operator)
    )
    return root


# Drawn and frozen projects by (plan name, plan bytes, PYTHONPATH), in this test process
_DRAWN: dict[tuple[str, bytes, str | None], Path] = {}


def drawn_and_frozen(root: Path, name: str = "small") -> None:
    """`harness draw` and `harness freeze` of the project's plan, through the CLI. A project
    holding only its plan is drawn and frozen once per plan in a test process and copied
    after: the two commands cost 4-5 s of CPU, and the tests that need them test neither
    (`freeze_as_printed` in test_freeze_history does, calling them itself). A copy is as
    good as its original: what they write holds no path of the project's own
    (test_freeze_records_hold_no_machine_specific_path, `copy_of` in test_dask)."""
    plan = root / "plans" / f"{name}.yaml"
    alone = sorted(root.rglob("*")) == [root / "plans", plan]
    key = (name, plan.read_bytes(), os.environ.get("PYTHONPATH"))
    if alone and key in _DRAWN:
        shutil.copytree(_DRAWN[key], root, dirs_exist_ok=True)
        return
    for command in ("draw", "freeze"):
        done = harness(command, f"plans/{name}.yaml", cwd=root)
        assert done.returncode == 0, done.stdout + done.stderr
    if alone:
        _DRAWN[key] = Path(tempfile.mkdtemp(prefix="drawn-")) / name
        shutil.copytree(root, _DRAWN[key])
        atexit.register(shutil.rmtree, _DRAWN[key].parent, True)


def ledger(root: Path, name: str = "small") -> list[LedgerRow]:
    (run,) = (root / "results" / name).iterdir()
    return list(read_rows(run / "ledger.jsonl"))


def comparable(rows: list[LedgerRow]) -> list[dict]:
    return sorted((r.comparable() for r in rows), key=lambda r: r["pair_id"])


def package_hashes() -> dict[str, str]:
    folder = Path(toy_domain.__file__).parent
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


# --- faults -------------------------------------------------------------------------------

FAULTS = {
    "transfer": (
        "timeout",
        """
        def transfer(bank, from_account, to_account, amount, memo=""):
            while True:
                pass
    """,
    ),
    "deposit": (
        "crash",
        """
        def deposit(bank, account_id, amount):
            import os
            os._exit(3)
    """,
    ),
    "rename_meeting": (
        "crash",
        """
        def rename_meeting(calendar, meeting_id, title):
            raise SystemExit(4)
    """,
    ),
    "restock": (
        "detected",
        """
        def restock(inventory, sku, quantity):
            raise MemoryError("mutant ran out")
    """,
    ),
    "freeze_account": (
        "detected",
        """
        def freeze_account(bank, account_id, reason):
            return freeze_account(bank, account_id, reason)
    """,
    ),
    "get_balance": (
        "compile_error",
        """
        def get_balance(bank, account_id):
            return bank.accounts[account_id].balance +
    """,
    ),
    "update_item": (
        "detected",
        """
        def update_item(inventory, sku, price=None, min_stock=None):
            raise KeyboardInterrupt
    """,
    ),
}


def hand_mutant(adapter: Adapter, site: FunctionSite, operator: str, text: str) -> Mutant:
    """A closed-world mutant of the toy domain whose function `site` reads `text`, written
    by a test rather than an operator (shared by test_coverage and test_miss_cause)."""
    version = adapter.version()
    return Mutant(
        id=mutant_id(version, site, operator, 0, text),
        arm=Arm.CLOSED_WORLD,
        operator=operator,
        defect_class=None,
        target="toy_domain",
        target_version=version,
        site=site,
        occurrence=0,
        mutated_source=text,
        diff=unified_diff(site, text, adapter.source_root()),
    )


def fault_corpus(root: Path) -> None:
    plan = load_plan(root / "plans" / "small.yaml")
    target = load_target("toy_domain")
    pairs = []
    for tool, (_, source) in FAULTS.items():
        site = next(s for s in tool_sites(target.adapter, tool) if s.qualname == tool)
        text = textwrap.dedent(source).lstrip()
        mutant = hand_mutant(target.adapter, site, "FAULT", text)
        pairs.append(
            DrawnPair(pair_id=f"{mutant.id}:{tool}", arm="closed_world", tool=tool, mutant=mutant)
        )
    corpus = Corpus(
        plan="small",
        seed=plan.seed,
        pairs=pairs,
        liveness={"toy_domain": {tool: [] for tool in FAULTS}},
    )
    write_corpus(root / "mutants" / "small", plan, [], corpus)


def fault_rows(root: Path) -> dict[str, LedgerRow]:
    """The fault corpus's rows by tool, each with the status and error its fault must give
    (timeout 3 s); the caller checks what else it wants."""
    rows = {r.tool: r for r in ledger(root)}
    assert {tool: row.status.value for tool, row in rows.items()} == {
        tool: (expected if tool != "update_item" else "crash")
        for tool, (expected, _) in FAULTS.items()
    }
    assert "exit code 3" in rows["deposit"].error
    assert "killed after 3 s" in rows["transfer"].error
    return rows


def test_faults_are_recorded_and_survived(tmp_path):
    root = project(tmp_path, timeout=3)
    fault_corpus(root)
    assert harness("freeze", "plans/small.yaml", cwd=root).returncode == 0
    done = harness("run", "plans/small.yaml", "--workers", "2", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = fault_rows(root)
    assert "SystemExit" in rows["rename_meeting"].error
    assert "KeyboardInterrupt" in rows["update_item"].error
    assert rows["transfer"].timing.seconds < 30


# --- resume, determinism, the installed target -----------------------------------------------


def test_killed_run_resumes_to_the_rows_of_an_uninterrupted_run(tmp_path):
    before = package_hashes()
    root = project(tmp_path, "small")
    drawn_and_frozen(root)
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)

    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", "plans/small.yaml", "--workers", "1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    run_dirs = root / "results" / "small"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        files = list(run_dirs.glob("*/ledger.jsonl")) if run_dirs.exists() else []
        if files and len(files[0].read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    interrupted = len(ledger(root))
    total = len(json.loads((root / "mutants/small/manifest.json").read_text())["pairs"])
    assert 3 <= interrupted < total

    resumed = harness("run", "plans/small.yaml", "--workers", "2", cwd=root)
    assert resumed.returncode == 0, resumed.stderr
    said = " ".join(resumed.stdout.split())  # rich may wrap the long run path anywhere
    assert f"{total - interrupted} pairs scored now, {interrupted} already in the ledger" in said
    assert harness("run", "plans/small.yaml", "--workers", "1", cwd=twin).returncode == 0

    rows = ledger(root)
    assert len(rows) == len({r.pair_id for r in rows}) == total
    assert comparable(rows) == comparable(ledger(twin))
    again = harness("run", "plans/small.yaml", cwd=root)
    assert f"0 pairs scored now, {total} already" in " ".join(again.stdout.split())
    assert comparable(ledger(root)) == comparable(rows)
    assert package_hashes() == before


def test_one_and_two_workers_give_identical_rows(tmp_path):
    one = project(tmp_path / "a", per_operator=2)
    drawn_and_frozen(one)
    two = tmp_path / "b"
    shutil.copytree(one, two)
    assert harness("run", "plans/small.yaml", "--workers", "1", cwd=one).returncode == 0
    assert harness("run", "plans/small.yaml", "--workers", "2", cwd=two).returncode == 0
    first, second = ledger(one), ledger(two)
    assert len(first) == 8
    assert comparable(first) == comparable(second)
    assert {r.status.value for r in first} <= {"detected", "missed"}


# --- the freeze ------------------------------------------------------------------------------


def test_run_refuses_a_changed_input_and_post_hoc_labels_rows(tmp_path):
    root = project(tmp_path, per_operator=1)
    drawn_and_frozen(root)
    plan = root / "plans" / "small.yaml"
    plan.write_text(plan.read_text().replace("a small plan", "a smaller plan"))
    refused = harness("run", "plans/small.yaml", cwd=root)
    assert refused.returncode == 2
    assert "plans/small.yaml: plan: changed since freeze" in refused.stderr
    assert "Traceback" not in refused.stderr and not (root / "results").exists()
    diff = next((root / "mutants" / "small" / "diffs").iterdir())
    diff.write_text(diff.read_text() + " ")
    refused = harness("run", "plans/small.yaml", cwd=root)
    assert f"mutants/small/diffs/{diff.name}: corpus: changed since freeze" in refused.stderr

    post_hoc = harness("run", "plans/small.yaml", "--post-hoc", cwd=root)
    assert post_hoc.returncode == 0, post_hoc.stderr
    assert "POST HOC" in post_hoc.stdout
    rows = ledger(root)
    assert rows and all(r.post_hoc and r.freeze_id.startswith("posthoc-") for r in rows)


def test_changed_contract_or_checker_is_named(tmp_path, monkeypatch):
    """verify() names a changed contract and a changed checker file (copies, not the repo)."""
    from harness.checker import ReferenceChecker
    from harness.execution.freeze import verify
    from harness.targets.toy import ToyAdapter

    root = project(tmp_path, per_operator=1)
    contracts = tmp_path / "contracts"
    shutil.copytree(Path(toy_domain.__file__).parent / "contracts", contracts)
    checker_copy = tmp_path / "checker"
    shutil.copytree(
        Path(sys.modules["harness.checker"].__file__).parent,
        checker_copy,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    monkeypatch.setattr(ToyAdapter, "contracts_dir", lambda self: contracts)
    monkeypatch.setattr(
        ReferenceChecker, "scope_files", lambda self: sorted(checker_copy.glob("*.py"))
    )
    drawn_and_frozen_in_process(root)
    plan_path = root / "plans" / "small.yaml"
    plan = load_plan(plan_path)
    assert verify(plan_path, plan, root)[1] == []

    transfer = contracts / "transfer.yaml"
    transfer.write_text(transfer.read_text().replace("Transfer", "transfer", 1))
    dynamic = checker_copy / "dynamic.py"
    dynamic.write_text(dynamic.read_text() + "#")
    problems = verify(plan_path, plan, root)[1]
    named = {(p.where, p.file.rsplit("/", 1)[-1].split(":")[-1]) for p in problems}
    assert ("contracts", "transfer.yaml") in named
    assert ("checker_scope", "dynamic.py") in named


def drawn_and_frozen_in_process(root: Path) -> None:
    from harness.execution.draw import draw
    from harness.execution.freeze import freeze

    plan_path = root / "plans" / "small.yaml"
    plan = load_plan(plan_path)
    corpus = draw(plan, root)
    freeze(plan_path, plan, root, [p.pair_id for p in corpus.pairs])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("seed: 7", "seed: seven"), "seed: Input should be a valid integer"),
        (lambda t: t.replace("M-PHANTOM", "M-NOPE"), "unknown operator 'M-NOPE'"),
        (lambda t: t.replace("kind: closed_world", "kind: closed"), "arms[closed_world].kind"),
        (lambda t: t + "bogus: 1\n", "bogus"),
    ],
)
def test_bad_plans_are_one_line_errors(tmp_path, edit, message):
    root = project(tmp_path)
    plan = root / "plans" / "small.yaml"
    plan.write_text(edit(plan.read_text()))
    done = harness("draw", "plans/small.yaml", cwd=root)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (root / "mutants").exists()


def test_refreeze_draws_only_from_pairs_no_freeze_used(tmp_path):
    root = project(tmp_path, per_operator=2)
    drawn_and_frozen(root)
    manifest = root / "mutants" / "small" / "manifest.json"
    first = {p["pair_id"] for p in json.loads(manifest.read_text())["pairs"]}
    refused = harness("draw", "plans/small.yaml", cwd=root)
    assert refused.returncode == 2 and "pass --refreeze" in refused.stderr
    assert harness("draw", "plans/small.yaml", "--refreeze", cwd=root).returncode == 0
    second = {p["pair_id"] for p in json.loads(manifest.read_text())["pairs"]}
    assert second and not first & second
    assert harness("freeze", "plans/small.yaml", cwd=root).returncode == 0
    record = json.loads((root / "plans" / "small.freeze.json").read_text())
    assert set(record["previous"][0]["used_pairs"]) == first
    assert set(record["used_pairs"]) == second


def committed(root: Path) -> None:
    """The project as a git repository whose one commit holds the freeze record (publish
    needs the freeze commit before the run)."""
    for command in (
        ["init", "-q"],
        ["add", "plans", "mutants"],
        ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "freeze"],
    ):
        subprocess.run(["git", "-C", str(root), *command], check=True, capture_output=True)


def test_report_and_compare_from_the_command_line(tmp_path):
    root = project(tmp_path, per_operator=2)
    drawn_and_frozen(root)
    committed(root)
    assert harness("run", "plans/small.yaml", cwd=root).returncode == 0
    (run,) = (root / "results" / "small").iterdir()
    published = harness("publish", str(run), cwd=root)
    assert published.returncode == 0, published.stderr
    reference = root / "results" / "reference" / "small" / run.name
    # the published run keeps the corpus it was scored from, even after another draw
    drawn = (root / "mutants" / "small" / "manifest.json").read_bytes()
    assert (reference / "corpus.json").read_bytes() == drawn
    shutil.rmtree(root / "mutants" / "small")
    done = harness("report", str(reference), cwd=root)
    assert done.returncode == 0, done.stderr
    assert "no mutant locations" not in done.stdout
    recall = (reference / "tables" / "closed_world_recall.md").read_text()
    assert run.name in recall and "M-PRECOND" in recall
    assert (reference / "recall-forest.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    compared = harness("compare", str(run), str(reference), cwd=root)
    assert compared.returncode == 0, compared.stderr
    # the same run twice: no operator may carry a directional claim
    assert "M-PRECOND" in compared.stdout
    assert not re.search(r"│\s*(A>B|B>A)\s*│", compared.stdout)
    as_md = harness("compare", str(run), str(reference), "--format", "md", cwd=root)
    assert as_md.returncode == 0, as_md.stderr
    header = as_md.stdout.splitlines()[2]
    header = re.sub(r" {2,}", " ", header)  # tabulate pads cells to the column width
    assert "| support claim (evidence bounds) | sampling-robust claim (Wilson-widened) |" in header
    assert "| A P/(P+F) | A U/N |" in header
    assert "support claims on 0 of" in as_md.stdout


def test_plan_schema_is_exported(tmp_path):
    done = harness("plan", "schema", cwd=tmp_path)
    schema = json.loads(done.stdout)
    assert schema["title"] == "Plan" and "arms" in schema["properties"]


def test_a_corpus_with_a_duplicate_pair_is_refused(tmp_path):
    root = project(tmp_path, per_operator=1)
    drawn_and_frozen(root)
    manifest = root / "mutants" / "small" / "manifest.json"
    corpus = json.loads(manifest.read_text())
    corpus["pairs"].append(corpus["pairs"][0])
    manifest.write_text(json.dumps(corpus))
    done = harness("run", "plans/small.yaml", "--post-hoc", cwd=root)
    assert done.returncode == 2
    assert "is drawn more than once" in done.stderr and "Traceback" not in done.stderr


def test_freeze_records_hold_no_machine_specific_path():
    """A freeze recorded in one clone must verify in another (the committed plans)."""
    from harness.execution.freeze import read_record
    from harness.execution.plan import project_root

    for name in ("closed_world", "open_world"):
        plan_path = Path(__file__).resolve().parents[1] / "plans" / f"{name}.yaml"
        plan = load_plan(plan_path)
        record = read_record(project_root(plan_path), plan)
        keys = [key.split(":", 1)[-1] for group in record.hashes.values() for key in group]
        assert keys and not [k for k in keys if k.startswith("/") or ".." in k], name


class _RefusingExecutor:
    """Fails as an unreachable scheduler does: after the run folder exists, before a row."""

    def describe(self) -> dict:
        return {"executor": "refusing"}

    def run(self, job, pairs, on_outcome) -> None:
        from harness.errors import Problem, UserError

        assert job.folder.is_dir()
        raise UserError(Problem("--scheduler", "scheduler", "no scheduler answered", "start one"))


def test_a_run_that_stops_before_its_first_row_leaves_no_folder(tmp_path):
    from harness.errors import UserError
    from harness.execution.runner import execute

    root = project(tmp_path, per_operator=1)
    drawn_and_frozen_in_process(root)
    with pytest.raises(UserError, match="no scheduler answered"):
        execute(root / "plans" / "small.yaml", executor=_RefusingExecutor())
    assert not (root / "results").exists()
    # a run with rows keeps them when it fails later (resume needs them)
    finished = execute(root / "plans" / "small.yaml", workers=1)
    assert finished.rows
    with pytest.raises(UserError):
        execute(root / "plans" / "small.yaml", executor=_RefusingExecutor())
    assert list(read_rows(finished.run_dir / "ledger.jsonl")) == finished.rows


class _HeapSpy:
    """Records the collector's state when the run hands it its pairs, and scores none."""

    def describe(self) -> dict:
        return {"executor": "heap-spy"}

    def run(self, job, pairs, on_outcome) -> None:
        import gc

        import toy_domain

        self.frozen = gc.get_freeze_count()
        self.enabled = gc.isenabled()
        # an object the target's loading made, and so long-lived: out of the collector's reach
        self.tracked = any(o is toy_domain.__dict__ for o in gc.get_objects())


def test_a_run_loads_its_targets_with_the_collector_paused_and_frees_them_at_its_end(
    tmp_path, monkeypatch
):
    """`runner._long_lived`: the targets load with the cyclic collector off and are then
    frozen (`gc.freeze`), the collector back on; the run's end unfreezes them, and a loading
    that fails leaves nothing frozen."""
    import gc

    from harness.errors import UserError
    from harness.execution import runner

    root = project(tmp_path, per_operator=1)
    drawn_and_frozen_in_process(root)
    loading: list[bool] = []
    real = runner.load_target

    def spy(name: str):
        loading.append(gc.isenabled())
        return real(name)

    monkeypatch.setattr(runner, "load_target", spy)
    gc.unfreeze()
    assert gc.isenabled()
    seen = _HeapSpy()
    runner.execute(root / "plans" / "small.yaml", executor=seen)
    assert loading == [False]
    assert seen.frozen > 10_000 and seen.enabled and not seen.tracked
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    # a collector the caller had turned off stays off
    gc.disable()
    try:
        runner.execute(root / "plans" / "small.yaml", executor=_HeapSpy())
        assert not gc.isenabled()
    finally:
        gc.enable()
    plan = root / "plans" / "small.yaml"
    plan.write_text(plan.read_text().replace("a small plan", "a smaller plan"))
    with pytest.raises(UserError, match="changed since freeze"):
        runner.execute(root / "plans" / "small.yaml", executor=_HeapSpy())
    assert gc.get_freeze_count() == 0 and gc.isenabled()

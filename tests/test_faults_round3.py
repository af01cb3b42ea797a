"""Issue 32, faults round three: each test is a reproduction from the issue, watched
failing before its fix: one run per folder, one validating ledger parser, a ledger that
proves it is whole, a resume that verifies what it reads, symlinks refused."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_runner import drawn_and_frozen, harness, project

PYTHON = sys.executable


@pytest.fixture(scope="module")
def frozen(tmp_path_factory) -> Path:
    """A 16-pair toy plan, drawn and frozen once; each test copies it."""
    root = project(tmp_path_factory.mktemp("frozen"), per_operator=4)
    drawn_and_frozen(root)
    return root


@pytest.fixture(scope="module")
def finished(tmp_path_factory, frozen) -> Path:
    """The same plan run to its end once; each test copies it."""
    root = tmp_path_factory.mktemp("finished") / "small"
    shutil.copytree(frozen, root)
    done = harness("run", "plans/small.yaml", "--workers", "2", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def copy(source: Path, tmp_path: Path) -> Path:
    root = tmp_path / "small"
    shutil.copytree(source, root)
    return root


def run_dir(root: Path) -> Path:
    (folder,) = (root / "results" / "small").iterdir()
    return folder


def one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The command failed with exit 2 and one `error:` line holding every needle."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    text = " ".join(done.stderr.split())
    for needle in needles:
        assert needle in text, text
    return text


# --- 1. one run per folder; a duplicated pair_id is refused everywhere --------------------


def test_a_second_run_of_the_same_folder_is_refused_and_the_ledger_holds_16_rows(frozen, tmp_path):
    root = copy(frozen, tmp_path)
    command = [PYTHON, "-m", "harness", "run", "plans/small.yaml", "--workers", "1"]
    first = subprocess.Popen(command, cwd=root, stderr=subprocess.PIPE, text=True)
    # once the first has written run.json it is inside the folder; it is stopped there
    # (not ended) so that the second, slower to start, surely meets it
    deadline = time.monotonic() + 60
    while not list(root.glob("results/small/*/run.json")) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(first.pid, signal.SIGSTOP)
    try:
        second = harness("run", "plans/small.yaml", "--workers", "1", cwd=root)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    first.wait(timeout=120)
    assert first.returncode == 0, first.stderr.read() if first.stderr else ""
    one_line_error(second, "is in use by", "pid", str(first.pid))
    lines = (run_dir(root) / "ledger.jsonl").read_text().splitlines()
    assert len(lines) == len({json.loads(line)["pair_id"] for line in lines}) == 16


def duplicated(finished: Path, tmp_path: Path) -> Path:
    root = copy(finished, tmp_path)
    ledger = run_dir(root) / "ledger.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    ledger.write_text("".join([*lines, lines[3]]))
    return root


@pytest.mark.parametrize("command", ["report", "compare", "trace", "run"])
def test_a_duplicated_pair_id_is_one_line_naming_the_line(finished, tmp_path, command):
    root = duplicated(finished, tmp_path)
    folder = str(run_dir(root))
    args = {
        "report": ["report", folder],
        "compare": ["compare", folder, folder],
        "trace": ["trace", "toy_domain", "--from", folder, "--out", str(tmp_path / "trace")],
        "run": ["run", "plans/small.yaml"],
    }[command]
    done = harness(*args, cwd=root)
    one_line_error(done, "ledger.jsonl: line 17", "line 4")
    assert not (run_dir(root) / "tables").exists()


# --- 7. the ledger file is not trusted: garbage lines and symlinks ------------------------


def test_run_refuses_a_garbage_line_as_report_does(finished, tmp_path):
    root = copy(finished, tmp_path)
    ledger = run_dir(root) / "ledger.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    ledger.write_text("".join([*lines[:5], '{"garbage": 1}\n', *lines[5:]]))
    for args in (["run", "plans/small.yaml"], ["report", str(run_dir(root))]):
        one_line_error(harness(*args, cwd=root), "ledger.jsonl: line 6", "not a ledger row")


def test_a_symlinked_ledger_or_run_folder_is_refused_and_its_target_untouched(finished, tmp_path):
    root = copy(finished, tmp_path)
    folder = run_dir(root)
    ledger = folder / "ledger.jsonl"
    victim = tmp_path / "victim.txt"
    victim.write_text(ledger.read_text() + '{"torn')  # a torn line a resume would cut
    ledger.unlink()
    ledger.symlink_to(victim)
    before = victim.read_bytes()
    for args in (["run", "plans/small.yaml"], ["report", str(folder)]):
        one_line_error(harness(*args, cwd=root), "ledger.jsonl", "symbolic link")
    assert victim.read_bytes() == before

    moved = tmp_path / "elsewhere"
    ledger.unlink()
    shutil.copy(victim, ledger)
    folder.rename(moved)
    folder.symlink_to(moved, target_is_directory=True)
    one_line_error(harness("run", "plans/small.yaml", cwd=root), str(folder), "symbolic link")


# --- 5. a ledger proves it is whole -------------------------------------------------------


def test_a_finished_run_records_a_chained_digest_of_its_rows(finished):
    from harness.execution.run_folder import read_ledger

    manifest = json.loads((run_dir(finished) / "run.json").read_text())
    read = read_ledger(run_dir(finished) / "ledger.jsonl")
    assert manifest["ledger"] == {"rows": 16, "sha256": read.digest}
    assert len(manifest["pair_ids_sha256"]) == 64


@pytest.mark.parametrize("edit", ["short", "empty", "altered"])
def test_a_short_or_altered_ledger_is_marked_and_refused(finished, tmp_path, edit):
    root = copy(finished, tmp_path)
    folder = run_dir(root)
    ledger = folder / "ledger.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    if edit == "short":
        lines = lines[5:]
    elif edit == "empty":
        lines = []
    else:  # one row's status changed, every pair still there
        row = json.loads(lines[2])
        row["status"] = "missed" if row["status"] == "detected" else "detected"
        lines[2] = json.dumps(row, sort_keys=True) + "\n"
    ledger.write_text("".join(lines))
    word = "ALTERED" if edit == "altered" else "SHORT"
    done = harness("report", str(folder), cwd=root)
    assert done.returncode == 0, done.stderr
    assert word.lower() in " ".join(done.stdout.split()).lower()
    # titled formats (a CSV has no title, as for an unfinished run)
    tables = sorted(p for p in (folder / "tables").iterdir() if p.suffix in (".md", ".tex"))
    assert tables  # pool_screening has rows even for an empty ledger
    for table in tables:
        assert word in table.read_text(), table.name
    assert word in (folder / "macros.tex").read_text()
    config = json.loads((folder / "mutation-report.json").read_text())["config"]
    assert word in config["incomplete"]
    shutil.rmtree(folder / "tables")
    one_line_error(harness("report", str(folder), "--strict", cwd=root), "ledger.jsonl", word)
    assert not (folder / "tables").exists()
    one_line_error(harness("publish", str(folder), cwd=root), "ledger.jsonl", word)
    assert not (root / "results" / "reference").exists()


# --- 6. a resume verifies what it reads from the run folder -------------------------------


@pytest.mark.parametrize("name", ["baseline.json", "coverage.json"])
def test_an_edited_baseline_or_coverage_is_refused_on_resume(finished, tmp_path, name):
    root = copy(finished, tmp_path)
    folder = run_dir(root)
    path = folder / name
    data = json.loads(path.read_text())
    if name == "baseline.json":
        for report in data.values():
            report["verdict"] = "VIOLATES"
    else:
        for record in data["tools"].values():
            record["reproducible"] = not record["reproducible"]
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    ledger = folder / "ledger.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    ledger.write_text("".join(lines[:-4]))  # four pairs left to score on resume
    done = harness("run", "plans/small.yaml", cwd=root)
    one_line_error(done, name, "digest")
    assert len(ledger.read_text().splitlines()) == 12


# --- 4. a write error is one line, leaves no temporary file, keeps the ledger resumable ---


def limited_run(root: Path, limit: int) -> subprocess.CompletedProcess[str]:
    """`harness run` under a file-size limit (ulimit -f): writes past it fail with EFBIG,
    as a full disk fails with ENOSPC."""
    import resource

    return subprocess.run(
        [PYTHON, "-m", "harness", "run", "plans/small.yaml", "--workers", "1"],
        cwd=root,
        capture_output=True,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )


def staging_files(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if "tmp" in p.name]


@pytest.mark.parametrize(("limit", "file"), [(8000, "baseline.json"), (17500, "ledger.jsonl")])
def test_a_write_error_is_one_line_and_the_ledger_stays_resumable(frozen, tmp_path, limit, file):
    root = copy(frozen, tmp_path)
    done = limited_run(root, limit)
    one_line_error(done, file, "File too large")
    assert staging_files(root / "results") == [] if (root / "results").exists() else True
    if file == "ledger.jsonl":  # whole lines only: the failed row was cut back
        data = (run_dir(root) / file).read_bytes()
        assert 0 < len(data) <= limit and data.endswith(b"\n")
    resumed = harness("run", "plans/small.yaml", cwd=root)
    assert resumed.returncode == 0, resumed.stderr
    assert len((run_dir(root) / "ledger.jsonl").read_text().splitlines()) == 16


# --- 9. size limits; control ids are names ------------------------------------------------


def test_an_oversized_plan_or_contract_is_one_line(tmp_path):
    root = project(tmp_path)
    plan = root / "plans" / "small.yaml"
    arm = (
        "  - name: a{i}\n    kind: closed_world\n    target: toy_domain\n"
        "    tools: [deposit]\n    operators: [M-PHANTOM]\n    draw_per_operator: 1\n"
    )
    plan.write_text(plan.read_text() + "".join(arm.format(i=i) for i in range(9_000)))
    done = harness("draw", "plans/small.yaml", cwd=root)
    one_line_error(done, "small.yaml", "larger than")
    contract = tmp_path / "big.yaml"
    contract.write_text("tool: deposit\n" + "# padding\n" * 150_000)
    one_line_error(harness("contracts", "validate", str(contract), cwd=root), "larger than")


def test_a_negative_control_id_is_a_name_not_a_path(tmp_path):
    root = project(tmp_path)
    (root / "controls").mkdir()
    outside = tmp_path / "x.yaml"
    outside.write_text("id: ../../x\n")
    plan = root / "plans" / "small.yaml"
    plan.write_text(
        plan.read_text() + "negative_controls:\n  - id: ../../x\n    predicted: CONFORMS\n"
    )
    done = harness("draw", "plans/small.yaml", cwd=root)
    text = one_line_error(done, "negative_controls")
    assert str(outside) not in text and "x.yaml" not in text


# --- 2. processes a pair starts die with the pair -------------------------------------------

HOSTILE = """
def deposit(bank, account_id, amount):
    import os
    import subprocess
    subprocess.Popen(["sleep", "{mark}1"], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        os.execvp("sleep", ["sleep", "{mark}2"])
    raise ValueError("refused")
"""


def processes_marked(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if any(w.startswith(mark.encode()) for w in words) and state != "Z":
                found.append(int(entry.name))
    return found


def test_processes_a_mutant_starts_die_with_its_pair(tmp_path, monkeypatch):
    import test_runner
    from test_runner import fault_corpus

    mark = f"4{os.getpid() % 1000:03d}.{int(time.time()) % 1000:03d}"
    monkeypatch.setattr(test_runner, "FAULTS", {"deposit": ("x", HOSTILE.format(mark=mark))})
    root = project(tmp_path, timeout=20)
    fault_corpus(root)
    assert harness("freeze", "plans/small.yaml", cwd=root).returncode == 0
    try:
        done = harness("run", "plans/small.yaml", cwd=root)
        assert done.returncode == 0, done.stderr
        left = processes_marked(mark)
        assert left == [], f"{len(left)} processes of the mutant outlived the run"
        (row,) = test_runner.ledger(root)
        assert row.tool == "deposit"
    finally:
        for pid in processes_marked(mark):
            os.kill(pid, signal.SIGKILL)


GREEDY = """
def deposit(bank, account_id, amount):
    held = [bytearray(3 << 30) for _ in range(4)]  # 12 GiB of address space, kept
    import time
    time.sleep(0.5)  # long enough for the runner to see it
    return len(held)
"""


def test_a_mutant_over_the_memory_limit_is_a_crash_with_the_reason(tmp_path, monkeypatch):
    import test_runner
    from test_runner import fault_corpus

    monkeypatch.setattr(test_runner, "FAULTS", {"deposit": ("x", GREEDY)})
    root = project(tmp_path, timeout=20)
    plan = root / "plans" / "small.yaml"
    plan.write_text(plan.read_text().replace("seed: 7\n", "seed: 7\nmemory_limit_mb: 2048\n"))
    fault_corpus(root)
    assert harness("freeze", "plans/small.yaml", cwd=root).returncode == 0
    done = harness("run", "plans/small.yaml", cwd=root)
    assert done.returncode == 0, done.stderr
    (row,) = test_runner.ledger(root)
    assert row.status.value == "crash", (row.status, row.error)
    assert "memory_limit_mb of 2048" in row.error


def test_an_old_published_run_re_derives_every_table_byte_for_byte(tmp_path):
    """Issue 32, item 9: the report of 1150b599761a06f8.static-scanner was said to drop
    closed_world_axes.csv; it is written, identical to the published one."""
    from harness.analysis import report

    published = (
        Path(__file__).resolve().parents[1]
        / "results/reference/closed_world/1150b599761a06f8.static-scanner"
    )
    result = report(published, tmp_path / "out")
    made_dir, kept_dir = result.out_dir / "tables", published / "tables"
    made = {p.relative_to(made_dir): p.read_bytes() for p in made_dir.rglob("*") if p.is_file()}
    kept = {p.relative_to(kept_dir): p.read_bytes() for p in kept_dir.rglob("*") if p.is_file()}
    assert Path("closed_world_axes.csv") in made
    assert made == kept


WRITER = """
def deposit(bank, account_id, amount):
    import os
    import tempfile
    for folder in ({tmp!r}, os.path.expanduser("~"), os.getcwd()):
        try:
            with open(os.path.join(folder, {name!r}), "w") as handle:
                handle.write("escaped")
        except OSError:
            pass
    with tempfile.NamedTemporaryFile(dir=None) as handle:  # its scratch folder: allowed
        handle.write(b"fine")
    raise ValueError("refused")
"""


def test_a_mutant_cannot_write_outside_its_scratch_folder(tmp_path, monkeypatch):
    import test_runner
    from test_runner import fault_corpus

    name = f"escaped-{os.getpid()}-{int(time.time())}"
    # a temporary folder of the run's own (TMPDIR): scratch folders of other harness runs
    # on the machine (other test workers, a user's run) are neither swept nor counted here
    tmp = str(tmp_path / "tmp")
    os.mkdir(tmp)
    monkeypatch.setenv("TMPDIR", tmp)
    text = WRITER.format(tmp=tmp, name=name)
    monkeypatch.setattr(test_runner, "FAULTS", {"deposit": ("x", text)})
    root = project(tmp_path, timeout=20)
    fault_corpus(root)
    assert harness("freeze", "plans/small.yaml", cwd=root).returncode == 0
    targets = [Path(tmp) / name, Path.home() / name, root / name]
    # the scratch folder of a pair child gone with a runner killed by -9: swept at start
    stale = Path(tmp) / "harness-pair-4194303"
    assert not Path("/proc/4194303").exists()
    stale.mkdir(exist_ok=True)
    before = set(Path(tmp).glob("harness-pair-*")) - {stale}  # none: the folder is the run's
    try:
        done = harness("run", "plans/small.yaml", cwd=root)
        assert done.returncode == 0, done.stderr
        assert [p for p in targets if p.exists()] == []
        (row,) = test_runner.ledger(root)
        assert row.tool == "deposit"
        left = set(Path(tmp).glob("harness-pair-*"))
        assert stale not in left and not left - before, sorted(left - before)
    finally:
        shutil.rmtree(stale, ignore_errors=True)
        for path in targets:
            path.unlink(missing_ok=True)

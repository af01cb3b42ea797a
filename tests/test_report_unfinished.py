"""`harness report` on a ledger a killed run left: a torn last line and an unfinished run
are said, in every title and caption, and `--strict` refuses them (issue 15, item 3)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from test_report import FIXTURE

from harness.analysis.runs import load_rows


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=120
    )


def copied_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("expected_tables"))
    return run


def test_a_torn_last_line_is_reported(tmp_path):
    run = copied_run(tmp_path)
    ledger = run / "ledger.jsonl"
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    done = harness("report", str(run), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert f"line {len(lines)} is torn" in said and "left out" in said
    assert len(load_rows(run)) == len(lines) - 1

    strict = harness("report", str(run), "--out", str(tmp_path / "strict"), "--strict")
    assert strict.returncode == 2
    assert f"ledger.jsonl: line {len(lines)}: is torn" in strict.stderr
    assert not (tmp_path / "strict").exists()


def test_an_unfinished_run_says_so_in_titles_captions_and_macros(tmp_path):
    run = copied_run(tmp_path)
    ledger = run / "ledger.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    ledger.write_text("".join(lines[:30]))
    meta = json.loads((run / "run.json").read_text())
    meta["ended_at"] = None
    (run / "run.json").write_text(json.dumps(meta))
    label = f"unfinished: 30 of {meta['pairs_total']} pairs"

    out = tmp_path / "out"
    done = harness("report", str(run), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert label in " ".join(done.stdout.split())
    markdown = sorted((out / "tables").glob("*.md"))
    assert markdown
    for path in markdown:
        title = path.read_text().splitlines()[0]
        assert title.startswith(f"### {label.upper()}: "), (path.name, title)
        assert f"- {label}: the run has not ended" in path.read_text()
    for path in (out / "tables").glob("*.tex"):
        caption = next(x for x in path.read_text().splitlines() if x.startswith("\\caption"))
        assert label.upper() in caption, (path.name, caption)
    assert label.upper() in (out / "macros.tex").read_text().splitlines()[0]
    assert json.loads((out / "mutation-report.json").read_text())["config"]["unfinished"] == label

    strict = harness("report", str(run), "--out", str(tmp_path / "strict"), "--strict")
    assert strict.returncode == 2
    (line,) = strict.stderr.strip().splitlines()
    assert "run.json: ended_at: the run has not ended" in line and label in line
    assert not (tmp_path / "strict").exists()


def test_a_finished_run_has_no_such_label(tmp_path):
    out = tmp_path / "out"
    done = harness("report", str(FIXTURE), "--out", str(out), "--strict")
    # not refused (2): the 3 is --strict's verdict on the fixture's failed predictions
    assert done.returncode == 3, done.stderr
    assert "verdict: 14 predictions scored: 7 held, 3 failed, 4 undecided" in done.stdout
    assert "unfinished" not in done.stdout.lower()
    tables = [p for p in (out / "tables").rglob("*") if p.is_file()]
    assert tables and not any("UNFINISHED" in p.read_text() for p in tables)

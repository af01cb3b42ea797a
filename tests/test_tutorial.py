"""The tutorial (docs/tutorial.md) works as written: its shell blocks, taken from the page
itself, run in order in one bash session on a scratch folder, with the installed `harness`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorial.md"
BLOCK = re.compile(r"^```bash\n(.*?)^```$", re.S | re.M)


def tutorial_script() -> str:
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 8, "the tutorial lost its shell blocks"
    return "set -euo pipefail\n" + "\n".join(blocks)


@pytest.mark.skipif(shutil.which("git") is None, reason="the tutorial needs git")
def test_the_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "GIT_AUTHOR_NAME": "tutorial",
        "GIT_AUTHOR_EMAIL": "tutorial@example.invalid",
        "GIT_COMMITTER_NAME": "tutorial",
        "GIT_COMMITTER_EMAIL": "tutorial@example.invalid",
        "HOME": str(tmp_path),  # no user git config or harness state leaks in
    }
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["bash", "-c", tutorial_script()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    project = tmp_path / "my-first-plan"
    runs = sorted(p for p in (project / "results" / "first").iterdir() if p.is_dir())
    reference, scanner = runs
    assert scanner.name == reference.name + ".static-scanner"
    rows = [json.loads(line) for line in (reference / "ledger.jsonl").read_text().splitlines()]
    assert rows and all(row["target"] == "my_bench" for row in rows)
    assert (reference / "report.html").is_file()
    assert "verdict: " in done.stdout and "report: " in done.stdout
    # the freeze was committed before the run: the run says so
    run = json.loads((reference / "run.json").read_text())
    assert run["freeze_record"]["status"] == "committed"

"""mutmut 3.8's own runner on the functions the harness mutates (bench/throughput.py).

A copy of the toy domain in a session folder; its tests are ONE pytest test, parametrised
by tool, that runs the harness's frozen reference checker on the tool and fails on a
VIOLATES the original tool's baseline lacks (what a harness pair scores). mutmut generates
its own mutants of exactly the named functions (`mutmut run --max-children N PATTERN...`),
maps each function to the tool tests that reach it (its per-function test mapping) and
forks per mutant without an interpreter start-up: the strongest peer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.checker import ReferenceChecker
from harness.mutation.model import FunctionSite
from harness.targets.registry import load_target

TEST = '''"""One pytest test: the reference checker on one toy tool, failing on a new VIOLATES."""

import json
from pathlib import Path

import pytest

from harness.checker import ReferenceChecker
from harness.targets.registry import load_target

BASELINE = json.loads((Path(__file__).parent / "baseline.json").read_text())


@pytest.mark.parametrize("tool", sorted(BASELINE))
def test_checker(tool: str) -> None:
    target = load_target("toy_domain")
    report = ReferenceChecker().check(target, [tool]).tool(tool)
    new = {c.clause_id for c in report.violations()} - set(BASELINE[tool])
    assert not new, sorted(new)
'''
RUN = "import sys; from mutmut.__main__ import cli; sys.argv[0] = 'mutmut'; cli()"
NO_TESTS = 33  # mutmut's exit code for a mutant no test reaches


@dataclass
class MutmutSession:
    functions: int
    mutants: int  # generated for the functions
    tested: int  # mutants some test reaches, run by mutmut
    killed: int
    wall_seconds: float  # the whole `mutmut run`: copy, generation, stats, clean run, mutants
    mutant_seconds: float  # the sum of mutmut's own per-mutant durations

    @property
    def mutants_per_second(self) -> float:
        return self.tested / self.wall_seconds


def pattern(site: FunctionSite) -> str:
    """mutmut's mangled name pattern for the mutants of one site's function."""
    parts = site.qualname.split(".")
    name = f"x_{parts[0]}" if len(parts) == 1 else f"xǁ{parts[0]}ǁ{parts[1]}"
    return f"{site.module}.{name}__mutmut_*"


def run_mutmut(folder: Path, sites: list[FunctionSite], workers: int) -> MutmutSession:
    target = load_target("toy_domain")
    session = folder / "mutmut-toy_domain"
    package = Path(target.adapter.source_root()) / "toy_domain"
    shutil.copytree(package, session / "toy_domain", ignore=shutil.ignore_patterns("__pycache__"))
    (session / "tests").mkdir()
    checker = ReferenceChecker()
    baseline = {
        tool: sorted(c.clause_id for c in checker.check(target, [tool]).tool(tool).violations())
        for tool in sorted(target.contracts)
    }
    (session / "tests" / "baseline.json").write_text(json.dumps(baseline, indent=1))
    (session / "tests" / "test_checker.py").write_text(TEST)
    (session / "setup.cfg").write_text(
        "[mutmut]\npaths_to_mutate=toy_domain/\ntests_dir=tests/\n"
        "also_copy=\n    toy_domain/contracts\n"
    )
    patterns = sorted({pattern(s) for s in sites})
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RUN, "run", "--max-children", str(workers), *patterns],
        cwd=session,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"mutmut run failed ({done.returncode}): {done.stdout[-1500:]}")
    import fnmatch

    codes: dict[str, int | None] = {}
    seconds = 0.0
    for meta in (session / "mutants").rglob("*.meta"):
        data = json.loads(meta.read_text())
        for key, code in data["exit_code_by_key"].items():
            if any(fnmatch.fnmatch(key, p) for p in patterns):
                codes[key] = code
                seconds += data["durations_by_key"].get(key) or 0.0
    tested = [c for c in codes.values() if c is not None and c != NO_TESTS]
    return MutmutSession(
        functions=len(patterns),
        mutants=len(codes),
        tested=len(tested),
        killed=sum(1 for c in tested if c != 0),
        wall_seconds=wall,
        mutant_seconds=seconds,
    )

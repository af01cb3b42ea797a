"""mutmut 3.8's own runner on the functions the harness mutates (bench/throughput.py).

A copy of the toy domain package in a fresh session folder; its test suite is ONE pytest
file, parametrised by tool (every toy tool with a contract), whose test runs the harness's
frozen reference checker (`harness.checker.ReferenceChecker`, the plan's seed) on the tool
and fails on a VIOLATES clause the original tool's baseline lacks (what a harness pair
scores). `mutmut run --max-children N PATTERN...` is restricted to exactly the functions of
the harness's toy pairs (mutmut's mangled names, `module.x_function__mutmut_*` or
`module.xǁClassǁmethod__mutmut_*`); mutmut generates ITS OWN mutants of those functions
(not the harness's), maps each function to the tests that reach it, and forks one child
per mutant from a process that has already imported pytest, the harness and the copy.

mutmut 3.8.1 reads its configuration from `pyproject.toml` `[tool.mutmut]` when that file
has the table, else from `setup.cfg` `[mutmut]` (mutmut/configuration.py, relative to the
working directory): the session writes a setup.cfg and no pyproject.toml. It copies the
package and `tests/` into `<session>/mutants/`, puts that folder first on sys.path and
removes the working directory from it, so the tests import the mutated copy; the test file
refuses to run when `toy_domain` comes from anywhere else (the installed package or the
repository is never imported, let alone written, by the session).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.checker import ReferenceChecker
from harness.execution.recorded_calls import attach_probes
from harness.mutation.model import FunctionSite
from harness.targets.registry import load_target

TEST = '''"""mutmut's suite (bench/mutmut_peer.py): the reference checker on one toy tool."""

import json
from pathlib import Path

import pytest

import toy_domain
from harness.checker import ReferenceChecker
from harness.execution.recorded_calls import attach_probes
from harness.targets.registry import load_target

HERE = Path(__file__).resolve().parent
if not Path(toy_domain.__file__).resolve().is_relative_to(HERE.parent):
    raise ImportError(f"toy_domain from {toy_domain.__file__}, not mutmut's copy {HERE.parent}")
SPEC = json.loads((HERE / "spec.json").read_text())
TARGET = load_target("toy_domain")
attach_probes({"toy_domain": TARGET}, {"toy_domain": SPEC["recorded_probes"]})
CHECKER = ReferenceChecker(seed=SPEC["seed"])


@pytest.mark.parametrize("tool", sorted(SPEC["baseline"]))
def test_checker(tool: str) -> None:
    report = CHECKER.check(TARGET, [tool]).tool(tool)
    new = {c.clause_id for c in report.violations()} - set(SPEC["baseline"][tool])
    assert not new, sorted(new)
'''
RUN = "import sys; from mutmut.__main__ import cli; sys.argv[0] = 'mutmut'; cli()"
# mutmut.stats.status_by_exit_code, the codes it records per mutant
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped"}
STATUS |= {36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout"}
STATUS |= {37: "caught by type check", -11: "segfault", -9: "segfault", None: "not checked"}
UNTESTED = ("no tests", "skipped", "not checked")


@dataclass
class MutmutSession:
    children: int
    functions: list[str]  # the patterns asked for, one per harness site
    mutants: int  # mutmut's mutants of those functions
    tested: int  # run against at least one test
    killed: int
    statuses: dict[str, int]
    wall_seconds: float  # the whole `mutmut run`: copy, generation, stats, clean run, mutants
    cpu_seconds: float  # of mutmut and every child it reaped
    mutant_seconds: float  # the sum of mutmut's own per-mutant wall durations
    own_rate: float | None  # the "mutations/second" mutmut prints for its mutation phase
    without_mutants: list[str] = field(default_factory=list)  # functions mutmut left alone

    @property
    def mutants_per_second(self) -> float:
        return self.tested / self.wall_seconds


def pattern(site: FunctionSite) -> str | None:
    """mutmut's mangled name pattern for the mutants of one site's function, or None when
    mutmut cannot mutate it (it only mutates module functions and methods of module
    classes)."""
    parts = site.qualname.split(".")
    if len(parts) == 1:
        name = f"x_{parts[0]}"
    elif len(parts) == 2 and "<locals>" not in parts:
        name = f"xǁ{parts[0]}ǁ{parts[1]}"
    else:
        return None
    module = site.module.removesuffix(".__init__")
    return f"{module}.{name}__mutmut_*"


def toy_baseline(seed: int, probes: dict[str, Any]) -> dict[str, list[str]]:
    """The violated clauses of every original toy tool with a contract, by the reference
    checker with the plan's seed and the recorded probe half `probes` (empty without one),
    in this process, on the installed package."""
    target = load_target("toy_domain")
    attach_probes({"toy_domain": target}, {"toy_domain": probes})
    checker = ReferenceChecker(seed=seed)
    report = checker.check(target, sorted(target.contracts))
    return {t.tool: sorted(c.clause_id for c in t.violations()) for t in report.tools}


def run_mutmut(
    folder: Path,
    sites: list[FunctionSite],
    children: int,
    seed: int,
    baseline: dict[str, list[str]],
    probes: dict[str, Any],
) -> MutmutSession:
    """One `mutmut run --max-children CHILDREN` in a new session folder under `folder`."""
    target = load_target("toy_domain")
    session = folder / f"mutmut-toy_domain-{children}"
    if session.exists():
        raise SystemExit(f"{session} exists: mutmut must start from a clean folder")
    package = Path(target.adapter.source_root()) / "toy_domain"
    shutil.copytree(package, session / "toy_domain", ignore=shutil.ignore_patterns("__pycache__"))
    (session / "tests").mkdir()
    (session / "tests" / "spec.json").write_text(
        json.dumps(
            {"seed": seed, "baseline": baseline, "recorded_probes": probes},
            indent=1,
            sort_keys=True,
        )
    )
    (session / "tests" / "test_checker.py").write_text(TEST)
    files = sorted({site.file for site in sites})
    (session / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = toy_domain\n"
        "pytest_add_cli_args_test_selection = tests/\n"
        # generate mutants only in the files of the sites (the rest is copied as it is)
        "only_mutate =\n"
        + "".join(f"    {f}\n" for f in files)
        + "use_git_change_detection = false\n"
        + "\n[tool:pytest]\naddopts = -p no:cacheprovider\n"
    )
    patterns = {site: pattern(site) for site in sites}
    wanted = sorted({p for p in patterns.values() if p is not None})
    if not wanted:  # with no name, `mutmut run` would run every mutant of the files
        raise SystemExit("mutmut can mutate none of the functions of the harness's toy pairs")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no __pycache__ beside the sources
    began, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        [sys.executable, "-c", RUN, "run", "--max-children", str(children), *wanted],
        cwd=session,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - began, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(
            f"mutmut run failed ({done.returncode}) in {session}:\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )

    codes: dict[str, int | None] = {}
    seconds = 0.0
    for meta in (session / "mutants").rglob("*.meta"):
        data = json.loads(meta.read_text())
        for key, code in data["exit_code_by_key"].items():
            if any(fnmatch.fnmatch(key, p) for p in wanted):
                codes[key] = code
                seconds += data.get("durations_by_key", {}).get(key) or 0.0
    statuses = Counter(STATUS.get(code, "suspicious") for code in codes.values())
    without = sorted(
        f"{site.module}.{site.qualname}"
        for site, p in patterns.items()
        if p is None or not any(fnmatch.fnmatch(key, p) for key in codes)
    )
    own = re.findall(r"([0-9.]+) mutations/second", done.stdout)
    return MutmutSession(
        children=children,
        functions=[f"{s.module}.{s.qualname}" for s in sites],
        mutants=len(codes),
        tested=sum(n for status, n in statuses.items() if status not in UNTESTED),
        killed=statuses.get("killed", 0),
        statuses=dict(sorted(statuses.items())),
        wall_seconds=wall,
        cpu_seconds=cpu,
        mutant_seconds=seconds,
        own_rate=float(own[-1]) if own else None,
        without_mutants=without,
    )


def _children_cpu() -> float:
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return reaped.ru_utime + reaped.ru_stime

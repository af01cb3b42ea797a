"""Coverage of the original tools, and the exact skipping it allows (`--skip-by-coverage`).

Rule. A pair's work in its worker is a sequence of *runs*, in this order: each liveness
call (from a fresh environment), each grader replay (`grader_tasks(tool)`, in order), then
the checker's check of the tool. Once per freeze (cached beside the baselines, in
coverage.json), every run is repeated on the ORIGINAL code under a profiler that records
which functions of the target's packages it executes (by file and qualname, as mutation
sites name them; a function's nested functions, lambdas and comprehensions count as the
function). A run that does not execute the mutated function executes the same code as on
the original, so its outcome is the original's. A run is *reused* (the original's outcome
taken, the run not repeated) only when neither it nor any run before it in the sequence
executes the mutated function: what an earlier run of mutated code may leave behind in the
process can then not reach it. A pair all of whose runs are reused is scored in the parent
without a worker (`skipped_by_coverage` in its row); its status and miss cause come from the
same scoring code, fed the original's outcomes.

Never reused:
- runs of a tool whose recorded original outcomes differ from the baselines (a run that is
  not reproducible in this process says nothing about the next one);
- pairs whose mutant changes anything evaluated at definition time: the site has a
  decorator (applying the mutant re-applies it: a fresh cache, a second registration), or
  the mutated text differs from the original outside the function body (signature,
  defaults, annotations, name) or in its docstring;
- pairs of negative controls (their contract is patched, so the checker's verdict differs);
- the checker's run, unless the checker is the reference checker (it only executes the
  tools; a checker such as the static scanner reads the mutated source without running it).
"""

from __future__ import annotations

import ast
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.mutation.model import FunctionSite
from harness.mutation.sites import function_source

COVERAGE_SCHEMA_VERSION = 1
_MONITORING_TOOL = 4  # a sys.monitoring tool id not used by debuggers (0-2) or coverage.py (3)


# --- recording ----------------------------------------------------------------------------------


@contextmanager
def executed_code() -> Iterator[set[CodeType]]:
    """The code objects of every Python function started inside the block, in any thread.
    `sys.monitoring` (PY_START) where available, else `sys.setprofile`/`threading.setprofile`
    'call' events (generators and coroutines report a 'call' on each resumption)."""
    seen: set[CodeType] = set()
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:  # pragma: no cover - Python 3.12+
        monitoring.use_tool_id(_MONITORING_TOOL, "contract-harness coverage")

        def started(code: CodeType, _offset: int) -> Any:
            seen.add(code)
            return monitoring.DISABLE  # once per code object is enough for a set

        monitoring.register_callback(_MONITORING_TOOL, monitoring.events.PY_START, started)
        monitoring.set_events(_MONITORING_TOOL, monitoring.events.PY_START)
        try:
            yield seen
        finally:
            monitoring.set_events(_MONITORING_TOOL, 0)
            monitoring.register_callback(_MONITORING_TOOL, monitoring.events.PY_START, None)
            monitoring.free_tool_id(_MONITORING_TOOL)
            monitoring.restart_events()  # the next recording must see every function again
        return

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            seen.add(frame.f_code)

    previous, previous_threads = sys.getprofile(), threading.getprofile()
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(previous)
        threading.setprofile(previous_threads)  # type: ignore[arg-type]


def function_names(codes: set[CodeType], root: Path, packages: frozenset[str]) -> list[str]:
    """`file::qualname` (file relative to `root`, as `FunctionSite.file`) of the code objects
    whose file lies in one of `packages` (top-level folders under `root`), sorted."""
    resolved: dict[str, str | None] = {}
    names: set[str] = set()
    for code in codes:
        filename = code.co_filename
        if filename not in resolved:
            try:
                relative = Path(filename).resolve().relative_to(root).as_posix()
            except (ValueError, OSError):
                relative = None
            resolved[filename] = (
                relative if relative and relative.split("/", 1)[0] in packages else None
            )
        relative = resolved[filename]
        if relative is not None:
            names.add(f"{relative}::{code.co_qualname}")
    return sorted(names)


# --- the per-tool record ----------------------------------------------------------------------


class ToolCoverage(BaseModel):
    """What each recorded run of one tool's pairs executes on the original code. Runs are
    recorded in the pair's order until every site of the tool's pairs has been executed
    by some run: no pair can reuse a later run, so recording it would cost time for nothing.
    A run not recorded counts as executing every site."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = COVERAGE_SCHEMA_VERSION
    packages: list[str]  # the top-level folders recorded; other files are unknown
    sites: list[str]  # `file::qualname` of the sites this record was made for
    reproducible: bool  # every recorded outcome equals the one computed before
    liveness_calls: int  # the corpus calls of the tool (recorded or not)
    liveness: list[list[str]]  # per recorded liveness call, in corpus order
    grader_task_ids: list[str]
    grader: list[list[str]]  # per recorded grader task, in grader_tasks order
    checker: list[str] | None  # None: not recorded


def record_tool(
    root: Path,
    packages: frozenset[str],
    sites: list[FunctionSite],
    observe_call: Callable[[int], Any],
    calls: int,
    grade: Callable[[str], Any],
    tasks: list[str],
    check: Callable[[], Any],
    expected: tuple[list[Any], list[Any], Any],
) -> ToolCoverage:
    """Run the runs of a tool on the original under the profiler, in order, until every
    site has been executed; `expected` holds the outcomes computed before (observations,
    grader verdicts, baseline report), which each recorded outcome must equal."""
    observations, verdicts, report = expected
    runs: list[tuple[int, Callable[[], Any], Any]] = [
        *((0, lambda i=i: observe_call(i), observations[i]) for i in range(calls)),
        *((1, lambda t=t: grade(t), verdicts[j]) for j, t in enumerate(tasks)),
        (2, check, report),
    ]
    covered: tuple[list[list[str]], list[list[str]], list[list[str]]] = ([], [], [])
    remaining = list(sites)
    reproducible = True
    for kind, run, want in runs:
        if not remaining:
            break
        with executed_code() as codes:
            try:
                outcome: Any = run()
            except Exception as exc:  # the original failing here: not what was computed before
                outcome = ("raised", type(exc).__name__)
        reproducible = reproducible and outcome == want
        names = function_names(codes, root, packages)
        covered[kind].append(names)
        remaining = [site for site in remaining if not executes(names, site)]
    return ToolCoverage(
        packages=sorted(packages),
        sites=sorted({f"{s.file}::{s.qualname}" for s in sites}),
        reproducible=reproducible,
        liveness_calls=calls,
        liveness=covered[0],
        grader_task_ids=list(tasks),
        grader=covered[1],
        checker=covered[2][0] if covered[2] else None,
    )


def executes(functions: list[str], site: FunctionSite) -> bool:
    """Does a run that executed `functions` execute the site's function (or a function
    nested in it)?"""
    exact = f"{site.file}::{site.qualname}"
    nested = exact + ".<locals>."
    return any(name == exact or name.startswith(nested) for name in functions)


# --- what a pair may reuse ---------------------------------------------------------------------


@dataclass(frozen=True)
class Reuse:
    """How many leading runs of a pair take the original's outcome (see the module rule)."""

    observations: int  # leading liveness calls
    grades: int  # leading grader tasks (all calls reused before any task is)
    checker: bool  # the checker's report is the baseline's (everything before reused)

    @property
    def everything(self) -> bool:
        return self.checker


def definition_unchanged(site: FunctionSite, mutated_source: str, root: Path) -> bool:
    """True when the mutant changes only the function's body (docstring aside) and the
    original has no decorator: defining the mutant evaluates what defining the original
    did, and nothing else."""
    try:
        original = ast.parse(function_source(site, root)).body[0]
        mutated = ast.parse(mutated_source).body[0]
    except (SyntaxError, OSError, IndexError):
        return False
    if not isinstance(original, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    if type(mutated) is not type(original) or original.decorator_list or mutated.decorator_list:
        return False
    if mutated.name != original.name:
        return False
    head = (ast.dump(original.args), ast.dump(original.returns) if original.returns else None)
    if head != (ast.dump(mutated.args), ast.dump(mutated.returns) if mutated.returns else None):
        return False
    return ast.get_docstring(original, clean=False) == ast.get_docstring(mutated, clean=False)


def reuse_for(
    coverage: ToolCoverage, site: FunctionSite, tasks: list[str], checker_reusable: bool
) -> Reuse:
    """The prefix of runs of a pair that execute nothing of `site` on the original (a run
    not recorded ends it)."""
    if not coverage.reproducible or f"{site.file}::{site.qualname}" not in coverage.sites:
        return Reuse(0, 0, False)
    if site.file.split("/", 1)[0] not in coverage.packages or tasks != coverage.grader_task_ids:
        return Reuse(0, 0, False)
    observations = 0
    for functions in coverage.liveness:
        if executes(functions, site):
            return Reuse(observations, 0, False)
        observations += 1
    if observations < coverage.liveness_calls:  # the rest was not recorded
        return Reuse(observations, 0, False)
    grades = 0
    for functions in coverage.grader:
        if executes(functions, site):
            return Reuse(observations, grades, False)
        grades += 1
    if grades < len(tasks) or coverage.checker is None:
        return Reuse(observations, grades, False)
    return Reuse(observations, grades, checker_reusable and not executes(coverage.checker, site))

"""Coverage-guided scoring: the runs of a pair that a mutant cannot change are taken from the
original instead of being run again (`harness run`, on unless `--no-skip-by-coverage`).

A pair's work in its worker is a sequence of *runs*, always in this order: each liveness
call of the tool (from a fresh environment), each grader task of the tool (`grader_tasks`),
then the checker's check of the tool. Once per run folder (cached in `coverage.json` beside
`baseline.json`), the leading runs of each tool are repeated on the ORIGINAL code while
recording which functions of the target's packages they start (`executed_code`:
`sys.monitoring` where the interpreter has it, `sys.setprofile` on 3.11), by file and qualname
as mutation sites name them; a function's nested functions, lambdas and comprehensions count
as the function. Recording stops once every site of the tool's pairs has been started by
some run (no pair can take a later run from the original); a run not recorded counts as
starting everything. A recorded run whose outcome differs from the one computed before marks
the tool not reproducible, and none of its runs is ever reused. The evaluation of each grader
task of a `SplitGrader` is recorded apart, when the runner grades the original.

The rules (each applies only to a mutant whose definition is unchanged, see below):

- **Untouched prefix** (exact). A run that does not start the mutated function on the
  original runs the same code on the mutant, so its outcome is the original's, provided
  no earlier run of the pair started it either (mutated code run earlier could have left
  something behind in the process). The leading runs that satisfy this are reused. A pair
  all of whose runs are reused never gets a worker: it is scored in the parent from the
  original's outcomes by the same scoring code (`skipped_by_coverage` in its row).
- **Identical evaluation inputs** (grader tasks of a `SplitGrader`: replay, then
  evaluate). The replay runs with the mutant; when the evaluation did not start the
  mutated function on the original, and everything it reads from the replay pickles to
  the same bytes as the original's, it would run the same code on the same inputs, so the
  original's verdict is taken without evaluating. This holds unless mutated code run
  earlier in the pair wrote process state (a module global, a class attribute) that the
  evaluation reads without it being among those inputs; `bench/exhaustive.py` scores the
  exhaustive pools both ways and fails on any differing row.
- The checker's run is reused only for the reference checker, which reads nothing of a
  tool but what executing it does; a checker that reads source (the static scanner) always
  runs.

Never reused:
- runs of a pair whose mutant changes what defining its function evaluates or registers:
  a site with a decorator, or a mutated text that differs from the original outside the
  body (name, parameters, defaults, annotations) or in its docstring;
- runs of a negative control (its contract is patched, so the checker's verdict differs);
- runs of a tool whose recorded original outcomes were not reproducible.

Rows are identical either way, timing and the two fields that say how a row was obtained
(`skipped_by_coverage`, `reused_runs`) aside.
"""

from __future__ import annotations

import ast
import bisect
import copyreg
import datetime
import hashlib
import io
import pickle
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.mutation.model import FunctionSite
from harness.mutation.sites import function_source, site_key

COVERAGE_SCHEMA_VERSION = 1
_MONITORING_TOOL = 4  # a sys.monitoring tool id debuggers (0-2) and coverage.py (3) leave free
_LOCALS = ".<locals>."


# --- recording ----------------------------------------------------------------------------------


@contextmanager
def executed_code() -> Iterator[set[CodeType]]:
    """The code objects of every Python function started inside the block, in any thread:
    `sys.monitoring` PY_START where available (3.12+), else `sys.setprofile` and
    `threading.setprofile` 'call' events (a generator reports one on each resumption)."""
    seen: set[CodeType] = set()
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:  # pragma: no cover - Python 3.12+
        events = monitoring.events
        monitoring.use_tool_id(_MONITORING_TOOL, "contract-harness coverage")

        def started(code: CodeType, _offset: int) -> Any:
            seen.add(code)
            return monitoring.DISABLE  # once per code object is enough for a set

        monitoring.register_callback(_MONITORING_TOOL, events.PY_START, started)
        monitoring.set_events(_MONITORING_TOOL, events.PY_START)
        try:
            yield seen
        finally:
            monitoring.set_events(_MONITORING_TOOL, 0)
            monitoring.register_callback(_MONITORING_TOOL, events.PY_START, None)
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


def site_function(file: str, qualname: str) -> str:
    """The key of the site a function belongs to: `file::qualname` of its outermost
    enclosing function (`f.<locals>.g` and `f.<locals>.<listcomp>` are `f`)."""
    return f"{file}::{qualname.split(_LOCALS, 1)[0]}"


class CodeNames:
    """Names code objects as `site_function` keys, when their file lies in one of the
    top-level `packages` under `root` (other code is left out); file lookups are cached."""

    def __init__(self, root: Path, packages: frozenset[str]):
        self.root = root.resolve()
        self.packages = packages
        self._files: dict[str, str | None] = {}

    def _relative(self, filename: str) -> str | None:
        if filename not in self._files:
            try:
                relative: str | None = Path(filename).resolve().relative_to(self.root).as_posix()
            except (ValueError, OSError):
                relative = None
            if relative is not None and relative.split("/", 1)[0] not in self.packages:
                relative = None
            self._files[filename] = relative
        return self._files[filename]

    def __call__(self, codes: set[CodeType]) -> frozenset[str]:
        names = set()
        for code in codes:
            relative = self._relative(code.co_filename)
            if relative is not None:
                names.add(site_function(relative, code.co_qualname))
        return frozenset(names)


def recorded(names: CodeNames, run: Callable[[], Any]) -> tuple[frozenset[str], tuple[str, Any]]:
    """(the site functions `run` starts, its outcome: ("ok", value) or ("raised", type))."""
    with executed_code() as codes:
        try:
            outcome: tuple[str, Any] = ("ok", run())
        except Exception as exc:
            outcome = ("raised", type(exc).__name__)
    return names(codes), outcome


# --- the records ------------------------------------------------------------------------------


class ToolCoverage(BaseModel):
    """The leading runs of one tool's pairs on the original, in the pair's order (its
    liveness calls, its grader tasks whole, the checker's run), recorded until every site of
    `sites` has been started by some run: no pair can take a later run from the original,
    so recording it would cost time for nothing. A run not recorded counts as starting
    every function."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = COVERAGE_SCHEMA_VERSION
    packages: list[str]  # the top-level folders recorded: a site elsewhere is never reused
    sites: list[str]  # the `site_function` keys this record was made for, sorted
    reproducible: bool  # every recorded outcome equals the one computed before
    liveness_calls: int
    grader_tasks: list[str]
    functions: list[str]  # the site functions some recorded run started, sorted
    runs: list[list[int]]  # per recorded run, in order: indexes into `functions`

    def covers(self, packages: frozenset[str], sites: frozenset[str]) -> bool:
        """Whether this record serves pairs of `sites` recorded over `packages`."""
        return self.packages == sorted(packages) and sites <= set(self.sites)


class EvaluationCoverage(BaseModel):
    """What one grader task's evaluation (a `SplitGrader`'s) starts on the original."""

    model_config = ConfigDict(extra="forbid")

    packages: list[str]
    functions: list[str]


def record_tool(
    names: CodeNames,
    sites: frozenset[str],
    runs: list[tuple[Callable[[], Any], Any]],
    liveness_calls: int,
    grader_tasks: list[str],
) -> ToolCoverage:
    """Run `runs` ((run, the outcome computed before)) on the original under
    `executed_code`, in order, until every one of `sites` has been started; a recorded
    outcome other than the one computed before makes the record not reproducible."""
    remaining = set(sites)
    reproducible = True
    started_by: list[frozenset[str]] = []
    for run, expected in runs:
        if not remaining:
            break
        started, outcome = recorded(names, run)
        reproducible = reproducible and outcome == ("ok", expected)
        started_by.append(started)
        remaining -= started
    every = sorted(set().union(*started_by))
    number = {name: i for i, name in enumerate(every)}
    return ToolCoverage(
        packages=sorted(names.packages),
        sites=sorted(sites),
        reproducible=reproducible,
        liveness_calls=liveness_calls,
        grader_tasks=list(grader_tasks),
        functions=every,
        runs=[sorted(number[name] for name in started) for started in started_by],
    )


# --- what a pair may reuse ---------------------------------------------------------------------


@dataclass(frozen=True)
class Reuse:
    """Which runs of one pair take the original's outcome (the module rules)."""

    observations: int  # leading liveness calls (untouched prefix)
    grades: int  # leading grader tasks (untouched prefix; all calls before them reused)
    evaluations: frozenset[str]  # grader tasks whose evaluation may be reused on equal inputs
    checker: bool  # the checker's report is the baseline's

    @property
    def everything(self) -> bool:
        """Nothing of the pair needs running (the checker comes last)."""
        return self.checker

    @property
    def runs(self) -> int:
        """Runs taken from the original outright (evaluations are counted where used)."""
        return self.observations + self.grades + int(self.checker)


NOTHING = Reuse(0, 0, frozenset(), False)


@dataclass(frozen=True)
class DefinitionHead:
    """What defining a function evaluates besides its body: its kind, name, parameters
    (defaults and annotations included), return annotation and docstring."""

    kind: type
    name: str
    args: str
    returns: str | None
    docstring: str | None

    @classmethod
    def of(cls, source: str) -> DefinitionHead | None:
        """The head of the function `source` defines first; None when that is not an
        undecorated function (or `source` does not parse)."""
        try:
            node = ast.parse(source).body[0]
        except (SyntaxError, IndexError):
            return None
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.decorator_list:
            return None
        return cls(
            type(node),
            node.name,
            ast.dump(node.args),
            ast.dump(node.returns) if node.returns else None,
            ast.get_docstring(node, clean=False),
        )


OriginalHeads = dict[tuple[str, tuple[str, str, int]], DefinitionHead | None]


def definition_unchanged(
    site: FunctionSite, mutated_source: str, root: Path, originals: OriginalHeads | None = None
) -> bool:
    """True when the mutant changes only the function's body (docstring aside) and the
    original has no decorator: defining the mutant evaluates what defining the original
    did, and nothing else. `originals` keeps each original's head once read, for a caller
    asking of many mutants of the same functions."""
    key = (str(root), site_key(site))
    if originals is not None and key in originals:
        original = originals[key]
    else:
        try:
            original = DefinitionHead.of(function_source(site, root))
        except OSError:
            original = None
        if originals is not None:
            originals[key] = original
    return original is not None and DefinitionHead.of(mutated_source) == original


def reuse_for(
    coverage: ToolCoverage,
    site: FunctionSite,
    tasks: list[str],
    evaluations: Mapping[str, frozenset[str] | None],
    checker_reusable: bool,
) -> Reuse:
    """The runs of a pair mutating `site` that take the original's outcome: the untouched
    prefix of the tool's record, and the grader tasks whose evaluation (`evaluations`: task
    -> the functions it starts, None where the grader does not split) never starts it."""
    key = site_function(site.file, site.qualname)
    package = site.file.split("/", 1)[0]
    reusable = frozenset(
        task for task in tasks if (e := evaluations.get(task)) is not None and key not in e
    )
    if package not in coverage.packages:
        return NOTHING  # a function outside the recorded files: it may run unseen
    if not coverage.reproducible or tasks != coverage.grader_tasks or key not in coverage.sites:
        return Reuse(0, 0, reusable, False)
    index = bisect.bisect_left(coverage.functions, key)
    found = index < len(coverage.functions) and coverage.functions[index] == key
    prefix = 0
    for run in coverage.runs:
        if found and index in run:
            break
        prefix += 1
    observations = min(prefix, coverage.liveness_calls)
    grades = min(max(prefix - coverage.liveness_calls, 0), len(tasks))
    everything = prefix > coverage.liveness_calls + len(tasks)  # the checker's run included
    return Reuse(observations, grades, reusable, checker_reusable and everything)


# --- equal evaluation inputs --------------------------------------------------------------------


@dataclass(frozen=True)
class ClockWindow:
    """The wall clock just before and just after a replay, naive local and UTC (what
    `datetime.now()` and `datetime.now(UTC)` read in between lies inside)."""

    naive: tuple[datetime.datetime, datetime.datetime]
    aware: tuple[datetime.datetime, datetime.datetime]

    @classmethod
    def around(cls, run: Callable[[], Any]) -> tuple[Any, ClockWindow]:
        """(what `run` returns, the window around it)."""
        naive, aware = datetime.datetime.now(), datetime.datetime.now(datetime.UTC)
        value = run()
        return value, cls(
            (naive, datetime.datetime.now()), (aware, datetime.datetime.now(datetime.UTC))
        )

    def holds(self, moment: datetime.datetime) -> bool:
        low, high = self.naive if moment.tzinfo is None else self.aware
        return low <= moment <= high


def fingerprint(inputs: Any, window: ClockWindow) -> bytes | None:
    """SHA-256 of the pickled evaluation inputs, every datetime inside `window` (a stamp
    of the wall clock read during the replay) pickled as one marker; None when the inputs do
    not pickle (never equal). Two replays whose only difference is when they ran compare
    equal: an evaluation that read those stamps could not give one verdict on two runs of
    the original either. A mutant that moves a stamp, or stamps a field the original did
    not, differs."""

    def stamp(moment: datetime.datetime) -> Any:
        if window.holds(moment):
            return str, ("<wall clock during the replay>",)
        return moment.__reduce_ex__(pickle.HIGHEST_PROTOCOL)

    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, datetime.datetime: stamp}
    try:
        pickler.dump(inputs)
    except Exception:  # an unpicklable input: the evaluation always runs
        return None
    return hashlib.sha256(buffer.getbuffer()).digest()

"""The run as a mutation-testing-elements report (Stryker's JSON schema, version 1), so its
HTML viewer and dashboards can show which mutants the checker killed.

Only defect-injecting arms (closed world, open world) are listed: a control is not a
defect, so its "survival" is the right answer and would distort the mutation score; the
precision tables report controls. A mutant's id is its pair id (one mutant may be scored
against several tools). The clauses play the schema's tests: a test id is
`<target>/<tool>#<clause id>` (clause ids repeat across tools), named by its clause id,
listed under `testFiles` per tool; `killedBy` lists the clauses that newly VIOLATE,
`coveredBy` the clauses the checker graded on the mutated tool (ledger version 4; left out
for older rows, which did not record it).

Each mutant's location is the exact span its diff changes and `replacement` the text put
there: the mutant's unified diff applied to the installed file, then the longest common
prefix and suffix of the two texts trimmed off, so the viewer shows the real change (a `+`
turned into `-` is one character). Where the installed file is unknown or no longer matches
the diff, the location falls back to the whole function, without a replacement.

The JSON written is validated against the vendored mutation-testing-elements schema
(`schemas/mutation-testing-report-schema.json`, see `schemas/NOTICE`).
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Literal

import fastjsonschema
from pydantic import BaseModel, ConfigDict

from harness.analysis.scoring import ArmKind, arm_kind
from harness.execution.draw import Corpus
from harness.execution.ledger import LedgerRow, MissCause, PairStatus
from harness.mutation.model import FunctionSite

SCHEMA_VERSION = "1"
LANGUAGE = "python"
REPORTED_ARMS = (ArmKind.CLOSED_WORLD, ArmKind.OPEN_WORLD)

MutantStatus = Literal[
    "Killed", "Survived", "NoCoverage", "CompileError", "RuntimeError", "Timeout", "Ignored"
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Position(_Model):
    line: int  # 1-based
    column: int  # 1-based


class Location(_Model):
    start: Position  # inclusive
    end: Position  # exclusive


class MutantResult(_Model):
    id: str
    mutatorName: str  # the schema spells it so
    location: Location
    status: MutantStatus
    statusReason: str | None = None
    killedBy: list[str] | None = None
    coveredBy: list[str] | None = None
    description: str | None = None
    replacement: str | None = None


class FileResult(_Model):
    language: str = LANGUAGE
    source: str
    mutants: list[MutantResult]


class Thresholds(_Model):
    """Mutation-score percentages the viewer colours by (Stryker's defaults)."""

    high: int = 80
    low: int = 60


class TestDefinition(_Model):
    id: str
    name: str


class TestFile(_Model):
    tests: list[TestDefinition]


class MutationTestReport(_Model):
    schemaVersion: str = SCHEMA_VERSION
    thresholds: Thresholds = Thresholds()
    files: dict[str, FileResult]
    testFiles: dict[str, TestFile] | None = None
    config: dict[str, str | bool]


def clause_test_id(target: str, tool: str, clause_id: str) -> str:
    """The schema's test id of a clause: unique across tools."""
    return f"{target}/{tool}#{clause_id}"


def _test_files(rows: list[LedgerRow]) -> dict[str, TestFile] | None:
    """One test file per tool (`<target>/<tool>` contract), a test per clause that killed or
    covered one of the rows' mutants; None when there is none."""
    clauses: dict[str, set[str]] = {}
    for row in rows:
        named = {v.clause_id for v in row.new_violations} | set(row.graded_clauses or [])
        clauses.setdefault(f"{row.target}/{row.tool}", set()).update(named)
    files = {
        f"contracts/{key}": TestFile(
            tests=[TestDefinition(id=f"{key}#{c}", name=c) for c in sorted(names)]
        )
        for key, names in sorted(clauses.items())
        if names
    }
    return files or None


def status_of(row: LedgerRow) -> tuple[MutantStatus, str | None]:
    """The schema's status for a pair, and why (when the status alone does not say)."""
    match row.status:
        case PairStatus.DETECTED:
            return "Killed", row.witness.detail if row.witness else None
        case PairStatus.MISSED if row.miss_cause is MissCause.UNREACHED:
            return "NoCoverage", "unreached: not live on the independent corpus nor on any probe"
        case PairStatus.MISSED:
            cause = row.miss_cause.value if row.miss_cause else "unknown cause"
            return "Survived", f"missed: {cause}" + (f" ({row.error})" if row.error else "")
        case PairStatus.UNTESTABLE:
            return "Survived", "untestable: no clause of the tool could be graded"
        case PairStatus.TIMEOUT:
            return "Timeout", row.error
        case PairStatus.COMPILE_ERROR:
            return "CompileError", row.error
        case PairStatus.CRASH:
            return "RuntimeError", row.error
        case PairStatus.INFRA_ERROR:
            return "Ignored", f"infra_error (the harness failed, not the mutant): {row.error}"
    raise AssertionError(row.status)


def _whole_function(site: FunctionSite | None, source: str) -> Location:
    if site is None:
        return Location(start=Position(line=1, column=1), end=Position(line=1, column=1))
    lines = source.splitlines()
    end_column = len(lines[site.end_line - 1]) + 1 if site.end_line <= len(lines) else 1
    return Location(
        start=Position(line=site.start_line, column=1),
        end=Position(line=site.end_line, column=end_column),
    )


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


@lru_cache(maxsize=64)
def _lines(source: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """`source`'s lines (ends kept) and each line's offset, with len(source) last: the
    mutants of one file share them (a str caches its hash, so the lookup is cheap)."""
    lines = tuple(source.splitlines(keepends=True))
    return lines, (0, *itertools.accumulate(map(len, lines)))


def _without_line_end(line: str) -> str:
    for end in ("\r\n", "\n", "\r"):
        if line.endswith(end):
            return line[: -len(end)]
    return line


def _applied(source: str, diff: str) -> tuple[str, int, int] | None:
    """`source` with `diff` applied, the number of leading lines the diff leaves untouched
    and the index of the first line after its last hunk; None when it does not fit."""
    lines, _ = _lines(source)
    out: list[str] = []
    first: int | None = None
    previous = ""  # the tag of the hunk line before
    at = 0  # index into `lines` of the next line not yet copied
    hunk_lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(hunk_lines):
        match = _HUNK.match(hunk_lines[i])
        i += 1
        if not match:
            continue  # the ---/+++ header
        start = int(match.group(1)) - (0 if match.group(2) == "0" else 1)
        if start < at:
            return None
        out += lines[at:start]
        at = start
        first = start if first is None else first
        while i < len(hunk_lines) and not hunk_lines[i].startswith("@@"):
            line = hunk_lines[i]
            i += 1
            tag, text = line[:1], line[1:]
            if tag == "\\":  # "\ No newline at end of file": the line before has none
                if previous == "+":  # an added last line: its newline is the diff's own
                    out[-1] = _without_line_end(out[-1])
                continue
            previous = tag
            if tag in (" ", "-"):
                if at >= len(lines) or lines[at].rstrip("\n") != text.rstrip("\n"):
                    return None
                at += 1
                if tag == " ":
                    out.append(lines[at - 1])
            elif tag == "+":
                out.append(text)
    return "".join(out + list(lines[at:])), at if first is None else first, at


def apply_diff(source: str, diff: str) -> str | None:
    """`source` with the unified `diff` applied, or None when the diff does not fit it (its
    context or removed lines differ from the file's)."""
    applied = _applied(source, diff)
    return None if applied is None else applied[0]


def _position(text: str, offset: int) -> Position:
    line = text.count("\n", 0, offset) + 1
    return Position(line=line, column=offset - (text.rfind("\n", 0, offset) + 1) + 1)


def _common_length(same: Callable[[int, int], bool], known: int, limit: int) -> int:
    """The largest k <= limit with same(0, k), for a `same(0, k)` true up to some k and false
    after, given true at `known`; `same(j, k)` compares the part from j to k alone, once the
    part up to j is known to be the same. It gallops from `known` and then halves, so the
    parts compared (copied) are about as long as the answer's distance from `known`, not
    the whole file (each mutant is near a hunk whose unchanged lines are known)."""
    lo, step = known, 64
    while lo < limit:
        probe = min(lo + step, limit)
        if not same(lo, probe):
            hi = probe - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if same(lo, mid):
                    lo = mid
                else:
                    hi = mid - 1
            return lo
        lo, step = probe, step * 2
    return lo


def change_span(source: str, diff: str) -> tuple[Location, str] | None:
    """The span of `source` that `diff` changes (end exclusive) and the text replacing it;
    None when the diff does not apply to `source`."""
    applied = _applied(source, diff) if source and diff else None
    if applied is None or applied[0] == source:
        return None
    mutated, first, after = applied
    _, offsets = _lines(source)
    # a hunk that only adds lines may start past the file's end (a file shorter than the
    # one the mutant was drawn from): no line after the end is known to be the same
    first, after = min(first, len(offsets) - 1), min(after, len(offsets) - 1)
    n, m = len(source), len(mutated)
    limit = min(n, m)
    # the lines before the first hunk and after the last are copied: the same on both sides
    prefix = _common_length(
        lambda j, k: source.startswith(mutated[j:k], j), min(offsets[first], limit), limit
    )
    suffix = _common_length(
        lambda j, k: source.endswith(mutated[m - k : m - j], 0, n - j),
        min(n - offsets[after], limit - prefix),
        limit - prefix,
    )
    end = n - suffix
    location = Location(start=_position(source, prefix), end=_position(source, end))
    return location, mutated[prefix : m - suffix]


@cache
def report_schema() -> dict[str, Any]:
    """The mutation-testing-elements report schema (vendored; see schemas/NOTICE)."""
    path = resources.files("harness.analysis") / "schemas" / "mutation-testing-report-schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _report_validator() -> Callable[[Any], Any]:
    # a copy: compiling adds what it resolved to the schema it is given
    return fastjsonschema.compile(copy.deepcopy(report_schema()))


def validate_report(payload: dict[str, Any]) -> None:
    """Raise `fastjsonschema.JsonSchemaValueException` unless `payload` is a valid report.

    fastjsonschema compiles the schema (draft 7) into Python once: a 9,620-pair report is
    checked in 0.3 s against jsonschema's 13-15 s, which `harness report` paid on every
    published exhaustive run. tests/test_mutation_report.py holds it to jsonschema's verdict
    on valid and broken reports."""
    _report_validator()(payload)


def mutation_report(
    rows: Iterable[LedgerRow],
    corpus: Corpus | None,
    read_source: Callable[[str, str], str],
    config: dict[str, str | bool],
) -> MutationTestReport:
    """`read_source(target, file)` gives the installed file's text or "" (I/O stays outside).
    Without a corpus, each mutant sits at 1:1 of a file named `<target>/<tool>`."""
    rows = list(rows)
    mutants = {p.pair_id: p.mutant for p in corpus.pairs} if corpus else {}
    files: dict[str, FileResult] = {}
    for row in sorted(rows, key=lambda r: r.pair_id):
        if arm_kind(row) not in REPORTED_ARMS:
            continue
        mutant = mutants.get(row.pair_id)
        site = mutant.site if mutant else None
        path = site.file if site else f"{row.target}/{row.tool}"
        if path not in files:
            files[path] = FileResult(
                source=read_source(row.target, site.file) if site else "", mutants=[]
            )
        status, reason = status_of(row)
        where = f"in {site.qualname}" if site else "(site unknown)"
        source = files[path].source
        span = change_span(source, mutant.diff) if mutant else None
        location, replacement = span if span else (_whole_function(site, source), None)
        if mutant and span is None:  # the installed source moved on since the draw
            where += " (source changed since the draw: whole function shown)"
        files[path].mutants.append(
            MutantResult(
                id=row.pair_id,
                mutatorName=row.operator,
                location=location,
                replacement=replacement,
                status=status,
                statusReason=reason,
                killedBy=[
                    clause_test_id(row.target, row.tool, v.clause_id) for v in row.new_violations
                ]
                if status == "Killed"
                else None,
                coveredBy=None
                if row.graded_clauses is None
                else [clause_test_id(row.target, row.tool, c) for c in row.graded_clauses],
                description=f"{row.operator} {where}, scored against tool {row.tool}",
            )
        )
    for file in files.values():
        file.mutants.sort(key=lambda m: (m.location.start.line, m.id))
    reported = [r for r in rows if arm_kind(r) in REPORTED_ARMS]
    return MutationTestReport(
        files=dict(sorted(files.items())), testFiles=_test_files(reported), config=config
    )

"""The static scanner run as a checker: a second, independent checker for the
static-versus-dynamic comparison (`harness run PLAN --checker static-scanner`).

For each tool it scans the functions the tool's call may reach (the harness's site
analysis) as they are bound now, so an in-memory mutant is scanned as mutated: a function
whose code was compiled from text Python's `linecache` holds (where `harness.mutation.apply`
registers every mutant's text) is read from there, every other one from its file.

Each scanner flag becomes one VIOLATES clause with the flag's class hint as its defect
class. Clause ids never hold line numbers, so a flag the original already raised keeps its
id in the mutant and only a new flag scores as detected:
`static.<check>.<function qualname>.<digest of the message>[.<n> for the n-th repeat]`.
A check that raises no flag on the tool is one CONFORMS clause `static.<check>`. Nothing is
executed; contracts are not read, so drafts cannot count here either.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import linecache
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.checker.verdicts import (
    CheckReport,
    ClauseVerdict,
    ToolReport,
    Verdict,
    Witness,
    roll_up,
)
from harness.errors import Problem, UserError
from harness.mutation.model import FunctionSite
from harness.mutation.sites import tool_sites
from harness.scanner import ScanCheck, ScanError, ScanFlag, scan_source
from harness.targets.registry import Target

STATIC_VERSION = "1.0.0"


def bound_function(site: FunctionSite) -> Any:
    """The function object bound at the site's qualified name now (mutants included)."""
    value: Any = importlib.import_module(site.module)
    for part in site.qualname.split("."):
        value = vars(value).get(part, None) if hasattr(value, "__dict__") else None
        if value is None:
            return None
    return inspect.unwrap(getattr(value, "__func__", value))


def in_memory_source(site: FunctionSite, root: Path) -> str | None:
    """The text the site's function was compiled from when that is not its file on disk
    (an in-memory mutant); None for a function that is still the installed one."""
    code = getattr(bound_function(site), "__code__", None)
    if code is None:
        return None
    disk = (root / site.file).resolve()
    if Path(code.co_filename).resolve() == disk:
        return None
    lines = linecache.cache.get(code.co_filename)
    return "".join(lines[2]) if lines else None


def _indent(text: str, prefix: str) -> list[str]:
    return [prefix + line if line.strip() else line for line in text.splitlines(keepends=True)]


def current_module_text(root: Path, file: str, sites: Sequence[FunctionSite]) -> str:
    """The module as it is bound now: the file's text with every site whose function runs
    from in-memory text replaced by that text (indented to where the original stands)."""
    lines = (root / file).read_text(encoding="utf-8").splitlines(keepends=True)
    for site in sorted(sites, key=lambda s: s.start_line, reverse=True):
        text = in_memory_source(site, root)
        if text is None:
            continue
        first = lines[site.start_line - 1]
        prefix = first[: len(first) - len(first.lstrip())]
        if not text.endswith("\n"):
            text += "\n"
        lines[site.start_line - 1 : site.end_line] = _indent(text, prefix)
    return "".join(lines)


def _digest(message: str) -> str:
    return hashlib.sha256(message.encode()).hexdigest()[:8]


def flag_clauses(flags: Sequence[ScanFlag]) -> list[ClauseVerdict]:
    """One VIOLATES clause per flag, a CONFORMS clause per check that raised none."""
    clauses: list[ClauseVerdict] = []
    repeats: Counter[str] = Counter()
    for flag in sorted(flags, key=lambda f: (f.check, f.function, f.line, f.message)):
        base = f"static.{flag.check}.{flag.function}.{_digest(flag.message)}"
        repeats[base] += 1
        clause_id = base if repeats[base] == 1 else f"{base}.{repeats[base]}"
        where = f"{flag.file}:{flag.line} {flag.function}"
        clauses.append(
            ClauseVerdict(
                clause_id=clause_id,
                verdict=Verdict.VIOLATES,
                defect_class=flag.class_hint,
                detail=f"{where}: {flag.message}",
                witness=Witness(probes=[], detail=f"{where}: {flag.message}"),
            )
        )
    raised = {flag.check for flag in flags}
    for check in ScanCheck:
        if check not in raised:
            clauses.append(
                ClauseVerdict(
                    clause_id=f"static.{check}",
                    verdict=Verdict.CONFORMS,
                    detail="no flag in any function the tool reaches",
                )
            )
    return clauses


class StaticScannerChecker:
    """A tool VIOLATES when a scanner flag names a function its call may reach."""

    name = "static-scanner"
    version = STATIC_VERSION

    def check(self, target: Target, tools: Sequence[str] | None = None) -> CheckReport:
        names = sorted(target.contracts) if tools is None else list(tools)
        known = set(target.adapter.tool_names())
        for name in names:
            if name not in known:
                raise UserError(
                    Problem(
                        target.name,
                        f"tool {name}",
                        "is not a tool of this target",
                        f"use one of: {', '.join(sorted(known))}",
                    )
                )
        return CheckReport(
            checker=self.name,
            checker_version=self.version,
            target=target.name,
            target_version=target.adapter.version(),
            tools=[self.check_tool(target, name) for name in names],
        )

    def check_tool(self, target: Target, tool: str) -> ToolReport:
        adapter = target.adapter
        root = Path(adapter.source_root())
        by_file: dict[str, list[FunctionSite]] = defaultdict(list)
        for site in tool_sites(adapter, tool):
            by_file[site.file].append(site)
        flags: list[ScanFlag] = []
        for file, sites in sorted(by_file.items()):
            text = current_module_text(root, file, sites)
            try:
                flags += scan_source(
                    text,
                    file=file,
                    functions={s.qualname for s in sites},
                    injected=adapter.injected_parameters(tool),
                )
            except ScanError as exc:  # a mutant's text the scanner cannot parse
                raise RuntimeError(f"{file}: {exc}") from exc
        clauses = flag_clauses(flags)
        return ToolReport(tool=tool, verdict=roll_up(clauses), clauses=clauses)

    def scope_files(self) -> list[Path]:
        here = Path(__file__).resolve().parent
        harness = here.parent
        return sorted(
            [
                *here.glob("*.py"),
                harness / "defects.py",
                harness / "checker" / "verdicts.py",
                *(harness / "mutation" / "sites").glob("*.py"),
            ]
        )

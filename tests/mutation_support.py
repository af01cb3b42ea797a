"""Shared by the mutation tests (test_sites, test_closed_world, test_control_operators,
test_enumerate, test_apply, test_registry): the toy target, the reference checker on it,
and the installed files' hashes when the tests started."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import toy_domain
from harness.checker import ReferenceChecker, compile_target
from harness.checker.verdicts import DefectClass, ToolReport
from harness.mutation.apply import applied
from harness.mutation.closed_world import CLOSED_WORLD_OPERATORS
from harness.mutation.control_operators import CONTROL_OPERATORS
from harness.mutation.model import Pair, SiteContext
from harness.targets.registry import load_target

TARGET = load_target("toy_domain")
ADAPTER = TARGET.adapter
ROOT = Path(ADAPTER.source_root())
TOOLS = ADAPTER.tool_names()
CLOSED = [op.name for op in CLOSED_WORLD_OPERATORS]
CONTROLS = [op.name for op in CONTROL_OPERATORS]
PACKAGE_DIR = Path(toy_domain.__file__).resolve().parent


def file_hashes() -> dict[str, str]:
    return {
        str(path.relative_to(PACKAGE_DIR)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(PACKAGE_DIR.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


HASHES_AT_IMPORT = file_hashes()
CHECKER = ReferenceChecker()
COMPILED = compile_target(TARGET)  # contracts are not touched by mutants: compile them once


def check(tool: str) -> ToolReport:
    return CHECKER.check_tool(TARGET, COMPILED, tool)


@functools.cache
def baseline(tool: str) -> frozenset[tuple[str, DefectClass | None]]:
    return frozenset((c.clause_id, c.defect_class) for c in check(tool).violations())


def new_violations(pair: Pair) -> set[tuple[str, DefectClass | None]]:
    """Clause violations of the pair's tool under the mutant that the original lacks."""
    baseline_violations = baseline(pair.tool)
    with applied(ADAPTER, pair.mutant):
        report = check(pair.tool)
    return {(c.clause_id, c.defect_class) for c in report.violations()} - baseline_violations


def context(**fields: object) -> SiteContext:
    base: dict[str, object] = {"tool": "t", "is_tool_function": True, "is_reset": False}
    return SiteContext(**{**base, **fields})

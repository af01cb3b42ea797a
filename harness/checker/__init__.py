"""THE CHECKER UNDER TEST: the reference contract checker and the interface every checker meets.

A checker takes a target (adapter + contracts) and tool names and returns a `CheckReport`
in the verdict model of `harness.checker.verdicts`. It also names the files that form its
freeze scope: a change to any of them is a new checker and needs a new freeze.

This package never imports from harness.mutation, harness.execution or harness.analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from harness.checker.dynamic import ToolCheck
from harness.checker.probes import ClauseCompileError, CompiledContract, compile_contract
from harness.checker.verdicts import CheckReport, ToolReport
from harness.contracts.model import Contract
from harness.errors import Problem, UserError
from harness.targets.equality import STRICT, EqualityPolicy
from harness.targets.registry import Target

REFERENCE_VERSION = "1.5.2"  # 1.1: observation clauses; 1.2: annotation-aware probe
# values, `pool: declared`, the int-vs-float hint in witnesses (issue 19); 1.3: probes from
# recorded pre-states (the probe half of a target's corpus), pools drawn without shuffling
# whole harvests (issue 27); 1.4: speed only, predicates compiled once into closures and
# run as the tree walk ran them (issue 31); 1.5: speed only, a state of tables harvested
# from its tables' partial harvests and once for states of the very same records, a truth's
# key written out once a search (issue 31); 1.5.1: memory only, the table and harvest memos
# bounded by the items they hold (issue 31); 1.5.2: speed and memory only, a diff sorts
# only the keys whose values differ and passes shared records without a call, a table's
# partial harvest joined set by set, a clause's id kept, a whole harvest dropped with the
# table partials it pins, no memo emptied by an entry that replaces another (issue 31)

# Modules outside this folder whose content decides the reference checker's verdicts.
# (a folder: every module of it)
_SHARED_SCOPE = ("contracts/predicate", "targets/equality.py", "defects.py")


@runtime_checkable
class Checker(Protocol):
    name: str
    version: str

    def check(self, target: Target, tools: Sequence[str] | None = None) -> CheckReport:
        """Verdicts for `tools` (every tool with a contract when None)."""
        ...

    def scope_files(self) -> list[Path]:
        """The files whose content is this checker: hashed into every freeze."""
        ...


# Compiled contracts by the identity of the (frozen) contract and the volatile paths. Entries
# hold the contract itself, so its id cannot be reused while the entry lives.
_COMPILED: dict[tuple[int, tuple[str, ...]], tuple[Contract, CompiledContract]] = {}
_COMPILED_ENTRIES = 1024


def compile_target(target: Target) -> dict[str, CompiledContract]:
    """Every contract of `target` compiled; a predicate that does not compile is a UserError.
    Each contract is compiled once per process: the checker runs once per pair on the same
    contracts, and compiling all of them cost as much as the probes."""
    compiled = {}
    problems = []
    volatile = tuple(target.adapter.volatile_paths())
    for tool, contract in sorted(target.contracts.items()):
        key = (id(contract), volatile)
        hit = _COMPILED.get(key)
        if hit is not None and hit[0] is contract:
            compiled[tool] = hit[1]
            continue
        try:
            compiled[tool] = compile_contract(contract, volatile)
        except ClauseCompileError as exc:
            path = str(target.contract_paths.get(tool, tool))
            problems.append(
                Problem(path, exc.clause_id, str(exc.__cause__ or exc), "rewrite the predicate")
            )
            continue
        if len(_COMPILED) >= _COMPILED_ENTRIES:
            del _COMPILED[next(iter(_COMPILED))]
        _COMPILED[key] = (contract, compiled[tool])
    if problems:
        raise UserError(problems)
    return compiled


class ReferenceChecker:
    """Probes each tool from fresh environments and grades every clause (see dynamic.py)."""

    name = "reference"
    version = REFERENCE_VERSION

    def __init__(self, seed: int = 0, policy: EqualityPolicy = STRICT):
        self.seed = seed
        self.policy = policy

    def check(self, target: Target, tools: Sequence[str] | None = None) -> CheckReport:
        compiled = compile_target(target)
        names = sorted(compiled) if tools is None else list(tools)
        for name in names:
            if name not in compiled:
                raise UserError(
                    Problem(
                        target.name,
                        f"tool {name}",
                        "has no contract",
                        f"write {target.adapter.contracts_dir()}/{name}.yaml or pick a tool "
                        f"from: {', '.join(sorted(compiled))}",
                    )
                )
        reports = [self.check_tool(target, compiled, name) for name in names]
        return CheckReport(
            checker=self.name,
            checker_version=self.version,
            target=target.name,
            target_version=target.adapter.version(),
            tools=reports,
        )

    def check_tool(
        self, target: Target, compiled: dict[str, CompiledContract], tool: str
    ) -> ToolReport:
        return ToolCheck(
            target.adapter,
            compiled[tool],
            compiled,
            seed=self.seed,
            policy=self.policy,
            recorded=target.recorded.get(tool, ()),
        ).check()

    def scope_files(self) -> list[Path]:
        here = Path(__file__).parent
        own = list(here.glob("*.py"))
        shared = [here.parent / name for name in _SHARED_SCOPE]
        files = [p for path in shared for p in (path.glob("*.py") if path.is_dir() else [path])]
        return sorted([*own, *files])


__all__ = ["CheckReport", "Checker", "ReferenceChecker", "ToolReport", "compile_target"]

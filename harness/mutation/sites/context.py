"""Site context: what an operator may know about a site beyond its text (`site_context`)."""

from __future__ import annotations

import ast
import functools
import inspect

from harness.contracts.model import Contract
from harness.contracts.predicate import compile_predicate
from harness.mutation.model import FunctionSite, SiteContext
from harness.mutation.refusals import judges, refusal_returns
from harness.mutation.sites.facts import state_writes
from harness.mutation.sites.index import _Package, _package_of
from harness.mutation.sites.resolver import reset_sites
from harness.mutation.sites.source import FunctionNode, site_key
from harness.targets.adapter import Adapter
from harness.targets.equality import parse_pattern


@functools.lru_cache(maxsize=256)
def _module_writers(
    package: _Package, module: str, volatile: frozenset[str] = frozenset()
) -> frozenset[str]:
    """Names of the module's functions and methods that write state that is not volatile,
    directly or by calling another writer of the module (to a fixpoint)."""
    entries = package.modules[module].entries
    writers = {f.name for f in entries if state_writes(f.node, (), volatile)}
    changed = True
    while changed:
        changed = False
        for entry in entries:
            if entry.name not in writers and state_writes(entry.node, writers, volatile):
                writers.add(entry.name)
                changed = True
    return frozenset(writers)


def invariant_fields(contract: Contract) -> frozenset[str]:
    """Every path segment (attribute or key name, not `*`) the invariants read."""
    fields: set[str] = set()
    for clause in contract.invariants:
        for _root, path in compile_predicate(clause.predicate).paths_read:
            fields.update(segment for segment in path if segment != "*")
    return frozenset(fields)


def volatile_fields(adapter: Adapter, contract: Contract | None) -> frozenset[str]:
    """The last attribute/key name of each volatile path pattern of the adapter and of the
    contract (`bank.last_activity` -> `last_activity`). Trailing wildcard (`*`) and argument
    (`{args.x}`) segments are skipped: `rooms.*` masks everything under `rooms`."""
    patterns = list(getattr(adapter, "volatile_paths", list)())
    if contract is not None:
        patterns.extend(contract.volatile)
    fields: set[str] = set()
    for pattern in dict.fromkeys(patterns):
        named = [s for s in parse_pattern(pattern) if s != "*" and not s.startswith("{")]
        if named:
            fields.add(named[-1])
    return frozenset(fields)


_RESET_KEYS: dict[tuple[type, str], frozenset[tuple[str, str, int]]] = {}


def _reset_keys(adapter: Adapter) -> frozenset[tuple[str, str, int]]:
    """Reset-path site keys, per adapter class and source root (adapters need not hash)."""
    key = (type(adapter), str(adapter.source_root()))
    if key not in _RESET_KEYS:
        _RESET_KEYS[key] = frozenset(site_key(s) for s in reset_sites(adapter))
    return _RESET_KEYS[key]


def site_context(
    adapter: Adapter, target_contract: Contract | None, site: FunctionSite, tool: str
) -> SiteContext:
    """What an operator may know about `site` when it is scored against `tool`."""
    tool_function = inspect.unwrap(adapter.tool_function(tool))
    package = _package_of(site.module, adapter)
    effective: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()
    clocks: frozenset[str] = frozenset()
    if target_contract is not None:
        clocks = frozenset(
            parse_pattern(c.clock.path)[-1] for c in target_contract.observations if c.clock
        )
        effective = frozenset(
            name for name, spec in target_contract.signature.items() if spec.effective
        )
        fields = invariant_fields(target_contract)
    volatile = volatile_fields(adapter, target_contract)
    is_tool = (
        site.module == tool_function.__module__ and site.qualname == tool_function.__qualname__
    )
    function = package.function_at(site.module, site.qualname, site.start_line)
    refusals = (
        refusal_returns(function.node, judges(adapter, target_contract, is_tool))
        if function is not None
        else frozenset()
    )
    writers = (
        _module_writers(package, site.module, volatile) if site.module in package.modules else None
    )
    return SiteContext(
        tool=tool,
        is_tool_function=is_tool,
        is_reset=site_key(site) in _reset_keys(adapter),
        injected=adapter.injected_parameters(tool),
        effective_arguments=effective,
        invariant_fields=fields,
        writer_names=writers or frozenset(),
        clock_fields=clocks,
        refusal_returns=refusals,
        volatile_fields=volatile,
    )


def parse_function(source: str) -> FunctionNode:
    """The one def in a site's dedented source text."""
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        raise ValueError("a site's source must hold exactly one function definition")
    return tree.body[0]

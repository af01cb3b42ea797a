"""Reset-path pairing: which fields a tool's call can leave behind (`written_fields`) and which
a reset step restores (`restored_fields`, `changed_statements`)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator

from harness.mutation.model import FunctionSite
from harness.mutation.sites.context import _module_writers, parse_function
from harness.mutation.sites.facts import (
    StateWrite,
    _bound_names,
    _is_state_target,
    chain_fields,
    fresh_locals,
    own_nodes,
    own_statements,
    root_name,
    state_writes,
    write_call,
)
from harness.mutation.sites.index import _Function, _Package, _package_of
from harness.mutation.sites.resolver import _closure, _Resolver, _tool_entry
from harness.mutation.sites.source import FunctionNode
from harness.targets.adapter import Adapter

_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _header_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of `stmt` outside its nested blocks (a simple statement: all of them)."""
    for name, value in ast.iter_fields(stmt):
        if name in _BLOCK_FIELDS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                yield from own_nodes(item)


def _flat_targets(targets: Iterable[ast.expr]) -> Iterator[ast.expr]:
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            yield from _flat_targets(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _flat_targets([target.value])
        else:
            yield target


def _assigned_targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign | ast.Delete):
        return list(_flat_targets(stmt.targets))
    if isinstance(stmt, ast.AugAssign) or (
        isinstance(stmt, ast.AnnAssign) and stmt.value is not None
    ):
        return list(_flat_targets([stmt.target]))
    return []


def _alias_values(fn: FunctionNode) -> dict[str, list[ast.expr]]:
    """Local name -> the expressions it is bound to as a plain name: `x = e`, `x: T = e`,
    `for x in e`, `with e as x`, `(x := e)` (what a write through `x` may reach)."""
    found: dict[str, list[ast.expr]] = {}

    def bind(target: ast.expr, value: ast.expr) -> None:
        for name in _bound_names(target):
            found.setdefault(name.id, []).append(value)

    for stmt in own_statements(fn):
        for node in own_nodes(stmt):
            if node is not stmt and isinstance(node, ast.stmt):
                continue
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                bind(node.target, node.value)
            elif isinstance(node, ast.For | ast.AsyncFor):
                bind(node.target, node.iter)
            elif isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        bind(item.optional_vars, item.context_expr)
            elif isinstance(node, ast.NamedExpr):
                bind(node.target, node.value)
    return found


def _alias_fields(name: str, aliases: dict[str, list[ast.expr]]) -> frozenset[str]:
    """Fields along every expression the local `name` is bound to, through chains of
    locals (`item = inventory.items[sku]` -> {items})."""
    found: set[str] = set()
    seen = {name}
    queue = [name]
    while queue:
        for value in aliases.get(queue.pop(), []):
            found |= chain_fields(value)
            root = root_name(value)
            if root is not None and root not in seen:
                seen.add(root)
                queue.append(root)
    return frozenset(found)


@functools.lru_cache(maxsize=16)
def _holders(package: _Package) -> dict[int, frozenset[str]]:
    """id(class) -> names of the package's class attributes whose annotation names that
    class or one of its bases anywhere (`accounts: dict[str, Account]` holds Account)."""
    direct: dict[int, set[str]] = {}
    classes = [c for m in package.modules.values() for c in m.classes.values()]
    for owner in classes:
        for attribute, annotation in owner.attributes.items():
            for node in ast.walk(annotation):
                if isinstance(node, ast.Name | ast.Attribute | ast.Constant):
                    held = package.class_of(node, owner.module)
                    if held is not None:
                        direct.setdefault(id(held), set()).add(attribute)
    return {
        id(cls): frozenset().union(*(direct.get(id(a), set()) for a in package.ancestors(cls)))
        for cls in classes
    }


def _written_expressions(write: StateWrite, fresh: frozenset[str]) -> list[ast.expr]:
    """What `write` changes: its assigned targets and the objects its write calls change."""
    exprs = [t for t in _assigned_targets(write.statement) if _is_state_target(t, fresh)]
    for hit in write.calls:
        if hit.kind == "in_place":
            exprs.append(hit.call.args[0])
        elif isinstance(hit.call.func, ast.Attribute):
            exprs.append(hit.call.func.value)
    return exprs


def _function_writes(
    package: _Package, function: _Function, volatile: frozenset[str]
) -> frozenset[str]:
    """The fields one function's non-volatile state writes write, with the attributes that
    hold what they write (see `written_fields`)."""
    writers = (
        _module_writers(package, function.module, volatile)
        if function.module in package.modules
        else frozenset()
    )
    writes = state_writes(function.node, writers, volatile)
    if not writes:
        return frozenset()
    fresh = fresh_locals(function.node)
    aliases = _alias_values(function.node)
    resolver = _Resolver(package, function)
    holders = _holders(package)
    found: set[str] = set()
    for write in writes:
        found |= write.fields
        for expr in _written_expressions(write, fresh):
            found |= chain_fields(expr)
            root = root_name(expr)
            if root is None:
                continue
            found |= _alias_fields(root, aliases)
            cls = resolver.class_of(ast.Name(root, ast.Load()))
            if cls is not None:
                found |= holders.get(id(cls), frozenset())
    return frozenset(found)


def written_fields(adapter: Adapter, tool: str, volatile: Iterable[str] = ()) -> frozenset[str]:
    """W: every field (attribute name or constant key) a state write of the tool's call may
    write, over the tool's function and every function it reaches (`tool_sites`). A write
    `self.accounts[k].balance -= x` writes {accounts, balance}; `self.transfers.append(r)`
    writes {transfers}; `account.frozen = True` also writes what holds `account`: the fields
    of the expressions the local is bound to (`account = bank.accounts[k]` -> accounts) and
    the class attributes annotated with its class (`accounts: dict[str, Account]`). Writes
    of `volatile` fields only, and calls of helpers that write nothing else, are left out."""
    package, entry = _tool_entry(adapter, tool)
    frozen = frozenset(volatile)
    return frozenset().union(
        *(_function_writes(package, f, frozen) for f in _closure(package, entry))
    )


def changed_statements(source: str, mutated: str) -> list[ast.stmt] | None:
    """The statements of `source` (one def, any depth) that `mutated` removes or changes,
    in source order: those whose AST is not matched by one of the mutated function. A
    compound statement whose block changed is among them. None when `mutated` does not
    parse."""
    try:
        after = parse_function(mutated)
    except (SyntaxError, ValueError):
        return None
    remaining: dict[str, int] = {}
    for stmt in own_statements(after):
        key = ast.dump(stmt)
        remaining[key] = remaining.get(key, 0) + 1
    changed = []
    for stmt in own_statements(parse_function(source)):
        key = ast.dump(stmt)
        if remaining.get(key, 0):
            remaining[key] -= 1
        else:
            changed.append(stmt)
    return changed


def restored_fields(
    adapter: Adapter, site: FunctionSite, statements: Iterable[ast.stmt]
) -> frozenset[str]:
    """R: the fields that `statements` (of the site's function, e.g. `changed_statements`)
    restore. An assignment `self.F = ...` restores its target's fields ({F}); a mutating
    call `self.items.clear()` its receiver's; a call of a target function
    (`self.inventory.reset()`, `self._reset_x()`, resolved as `tool_sites` resolves calls)
    every field a state write of that function, or of anything it reaches, writes. Only the
    header of a compound statement is read (its blocks are statements of their own)."""
    package = _package_of(site.module, adapter)
    function = package.function_at(site.module, site.qualname, site.start_line)
    resolver = _Resolver(package, function) if function is not None else None
    found: set[str] = set()
    callees: dict[int, _Function] = {}
    for stmt in statements:
        for target in _assigned_targets(stmt):
            if isinstance(target, ast.Attribute | ast.Subscript):
                found |= chain_fields(target)
        for node in _header_nodes(stmt):
            if not isinstance(node, ast.Call):
                continue
            hit = write_call(node, frozenset(), frozenset())
            if hit is not None:
                found |= hit.fields
            for callee in resolver.resolve(node) if resolver is not None else []:
                for reached in _closure(package, callee):
                    callees[id(reached)] = reached
    for reached in callees.values():
        for write in state_writes(reached.node):
            found |= write.fields
    return frozenset(found)

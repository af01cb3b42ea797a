"""Check `verb_pair_asymmetry` (hint: invariant_break): complementary verbs (book/cancel, ...)
where one side writes a field the other never touches."""

from __future__ import annotations

import ast

from harness.scanner.flags import _MUTATORS, _VERB_PAIRS, ScanCheck, ScanFlag
from harness.scanner.model import (
    _call_name,
    _const_str,
    _field_of,
    _flag,
    _Func,
    _is_state_target,
    _Module,
    _root_name,
    _walk_body,
)


def _split_verb(name: str) -> tuple[str, str] | None:
    bare = name.lstrip("_")
    for pair in _VERB_PAIRS:
        for verb in pair:
            if bare == verb:
                return verb, ""
            if bare.startswith(verb + "_"):
                return verb, bare[len(verb) + 1 :]
    return None


def _pairs(functions: list[_Func]) -> list[tuple[_Func, _Func]]:
    """Complementary-verb pairs within each scope (module level, or one class)."""
    by_scope_verb: dict[tuple[str, str], list[tuple[_Func, str]]] = {}
    for fn in functions:
        split = _split_verb(fn.name)
        if split is not None:
            by_scope_verb.setdefault((fn.scope, split[0]), []).append((fn, split[1]))
    pairs: list[tuple[_Func, _Func]] = []
    scopes = sorted({scope for scope, _ in by_scope_verb})
    for scope in scopes:
        for verb_a, verb_b in _VERB_PAIRS:
            side_a = by_scope_verb.get((scope, verb_a), [])
            side_b = by_scope_verb.get((scope, verb_b), [])
            pairs += _match_sides(side_a, side_b)
    return pairs


def _match_sides(
    side_a: list[tuple[_Func, str]], side_b: list[tuple[_Func, str]]
) -> list[tuple[_Func, _Func]]:
    if not side_a or not side_b:
        return []
    if len(side_a) == 1 and len(side_b) == 1:
        return [(side_a[0][0], side_b[0][0])]
    pairs = [(fa, fb) for fa, ra in side_a for fb, rb in side_b if ra == rb]
    paired = {id(f) for pair in pairs for f in pair}
    rest_a = [(f, r) for f, r in side_a if id(f) not in paired]
    rest_b = [(f, r) for f, r in side_b if id(f) not in paired]
    # A bare verb (`reserve`) pairs with any leftover function of the other verb.
    bare = [(fa, fb) for fa, ra in rest_a for fb, rb in rest_b if not ra or not rb]
    pairs += bare
    paired |= {id(f) for pair in bare for f in pair}
    rest_a = [(f, r) for f, r in rest_a if id(f) not in paired]
    rest_b = [(f, r) for f, r in rest_b if id(f) not in paired]
    if len(rest_a) == 1 and len(rest_b) == 1:
        pairs.append((rest_a[0][0], rest_b[0][0]))
    return pairs


def _direct_writes(fn: _Func) -> set[str]:
    fields: set[str] = set()

    def add_target(target: ast.expr) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                add_target(element)
        elif isinstance(target, ast.Starred):
            add_target(target.value)
        elif isinstance(target, ast.Attribute | ast.Subscript) and _is_state_target(target, fn):
            name = _field_of(target, fn.aliases)
            if name is not None:
                fields.add(name)

    for node in fn.own:
        if isinstance(node, ast.Assign | ast.Delete):
            for target in node.targets:
                add_target(target)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            add_target(node.target)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and _root_name(node.func.value) not in fn.fresh
        ):
            name = _field_of(node.func.value, fn.aliases)
            if name is not None:
                fields.add(name)
    return fields


def _direct_touches(fn: _Func) -> set[str]:
    """Every field name the body mentions: attributes, string keys, getattr/get names."""
    names: set[str] = set(fn.aliases.values())
    for node in _walk_body(fn.node):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Subscript):
            key = _const_str(node.slice)
            if key is not None:
                names.add(key)
        elif isinstance(node, ast.Call) and node.args:
            callee = _call_name(node.func)
            if callee in {"get", "pop", "setdefault"} and isinstance(node.func, ast.Attribute):
                key = _const_str(node.args[0])
            elif callee in {"getattr", "setattr", "hasattr", "delattr"} and len(node.args) > 1:
                key = _const_str(node.args[1])
            else:
                key = None
            if key is not None:
                names.add(key)
    return names


def _callees(fn: _Func, module: _Module) -> list[_Func]:
    """Same-module functions this one calls by name (`_debit(...)`, `self._debit(...)`)."""
    found: dict[int, _Func] = {}
    for node in fn.own:
        if isinstance(node, ast.Call):
            name = _call_name(node.func)
            for callee in module.by_name.get(name or "", []):
                if callee is not fn:
                    found[id(callee)] = callee
    return list(found.values())


def _check_verb_pairs(selected: list[_Func], module: _Module) -> list[ScanFlag]:
    writes: dict[int, set[str]] = {}
    touches: dict[int, set[str]] = {}

    def facts(fn: _Func) -> tuple[set[str], set[str]]:
        if id(fn) not in writes:
            w, t = _direct_writes(fn), _direct_touches(fn) | _direct_writes(fn)
            for callee in _callees(fn, module):
                callee_writes = _direct_writes(callee)
                w |= callee_writes
                t |= _direct_touches(callee) | callee_writes
            writes[id(fn)], touches[id(fn)] = w, t
        return writes[id(fn)], touches[id(fn)]

    flags: list[ScanFlag] = []
    for fa, fb in _pairs(selected):
        writes_a, touches_a = facts(fa)
        writes_b, touches_b = facts(fb)
        for writer, writer_fields, other, other_touches in (
            (fa, writes_a, fb, touches_b),
            (fb, writes_b, fa, touches_a),
        ):
            missing = sorted(writer_fields - other_touches)
            if missing:
                listed = ", ".join(f"`{m}`" for m in missing)
                verb = "writes" if len(missing) == 1 else "write"
                flags.append(
                    _flag(
                        ScanCheck.VERB_PAIR_ASYMMETRY,
                        module.file,
                        other,
                        other.line,
                        f"{other.name} never touches {listed}, which {writer.name} {verb}",
                    )
                )
    return flags

"""Read-set analysis: which `args` names and which state paths a predicate reads
(`args_read`, `paths_read`), without evaluating it."""

from __future__ import annotations

import ast

from harness.contracts.predicate.language import METHODS


def _const_segment(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and (type(node.value) is str or type(node.value) is int):
        return str(node.value)
    return None


class _Chain:
    """An access chain rooted at a root name; `open` is False once a method or slice has
    turned the value into something paths can no longer name."""

    __slots__ = ("inner", "open", "root", "segments")

    def __init__(self, root: str) -> None:
        self.root = root
        self.segments: tuple[str, ...] = ()
        self.open = True
        self.inner: list[ast.expr] = []  # sub-expressions (keys, arguments) to scan too

    def extend(self, segment: str) -> None:
        if self.open:
            self.segments = (*self.segments, segment)


def _chain(node: ast.expr, roots: frozenset[str]) -> _Chain | None:
    if isinstance(node, ast.Name):
        return _Chain(node.id) if node.id in roots else None
    if isinstance(node, ast.Attribute):
        chain = _chain(node.value, roots)
        if chain is not None:
            chain.extend(node.attr)
        return chain
    if isinstance(node, ast.Subscript):
        chain = _chain(node.value, roots)
        if chain is None:
            return None
        if isinstance(node.slice, ast.Slice):
            parts = (node.slice.lower, node.slice.upper, node.slice.step)
            chain.inner.extend(p for p in parts if p is not None)
            chain.open = False  # a slice is a list again, its indexes are not the state's
            return chain
        segment = _const_segment(node.slice)
        if segment is None:
            chain.inner.append(node.slice)
        chain.extend("*" if segment is None else segment)
        return chain
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in METHODS
    ):
        chain = _chain(node.func.value, roots)
        if chain is None:
            return None
        method = node.func.attr
        chain.inner.extend(node.args)
        if method == "get":  # reads one key, like a subscript
            segment = _const_segment(node.args[0]) if node.args else None
            chain.extend("*" if segment is None else segment)
            return chain
        if method in ("values", "items"):
            chain.extend("*")
        chain.open = False
        return chain
    return None


def _paths_read(tree: ast.expr, roots: frozenset[str]) -> frozenset[tuple[str, tuple[str, ...]]]:
    found: set[tuple[str, tuple[str, ...]]] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        chain = _chain(node, roots) if isinstance(node, ast.expr) else None
        if chain is not None:
            found.add((chain.root, chain.segments))
            stack.extend(chain.inner)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return frozenset(found)


Path = tuple[str, tuple[str, ...]]


def _bound_paths_read(tree: ast.expr, roots: frozenset[str]) -> frozenset[Path]:
    """Like `_paths_read`, with comprehension-bound names resolved to the element path of
    what they iterate (``[l for l in post.lines if l.on][0].data_gb`` reads
    ``post.lines.*.on`` and ``post.lines.*.data_gb``), and an index into a comprehension
    read as an index into its element. ``x.items()`` binds ``(key, value)`` to
    ``x.*`` and its elements. Used by the score-at-risk trace (harness/trace)."""
    found: set[Path] = set()

    def element(node: ast.expr, env: dict[str, Path]) -> Path | None:
        """The path of one element of a comprehension's value, recording its reads."""
        if not isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return None
        inner = comprehension(node, env)
        return resolve(node.elt, inner)

    def comprehension(node: ast.AST, env: dict[str, Path]) -> dict[str, Path]:
        inner = dict(env)
        for gen in node.generators:  # type: ignore[attr-defined]
            items = (
                isinstance(gen.iter, ast.Call)
                and isinstance(gen.iter.func, ast.Attribute)
                and gen.iter.func.attr in ("items", "keys")
            )
            receiver = gen.iter.func.value if items else gen.iter  # type: ignore[attr-defined]
            source = resolve(receiver, inner)
            if source is None:
                visit(gen.iter, inner)
            for index, name in enumerate(_target_names(gen.target)):
                if source is None:
                    inner.pop(name, None)
                elif items and index == 0:
                    inner[name] = source  # a key names the element; it reads no value
                else:
                    inner[name] = (source[0], (*source[1], "*"))
            for cond in gen.ifs:
                visit(cond, inner)
        return inner

    def resolve(node: ast.expr, env: dict[str, Path]) -> Path | None:
        """The path `node` reads (recorded, with its keys and arguments visited)."""
        path = chain(node, env)
        if path is not None:
            found.add(path)
        return path

    def chain(node: ast.expr, env: dict[str, Path]) -> Path | None:
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return (node.id, ()) if node.id in roots else None
        if isinstance(node, ast.Attribute):
            base = chain(node.value, env)
            return None if base is None else (base[0], (*base[1], node.attr))
        if isinstance(node, ast.Subscript):
            base = element(node.value, env) or chain(node.value, env)
            if base is None:
                return None
            if isinstance(node.slice, ast.Slice):
                for part in (node.slice.lower, node.slice.upper, node.slice.step):
                    if part is not None:
                        visit(part, env)
                return base
            if isinstance(node.value, ast.ListComp | ast.SetComp | ast.GeneratorExp):
                visit(node.slice, env)
                return base  # an index into a comprehension picks one of its elements
            segment = _const_segment(node.slice)
            if segment is None:
                visit(node.slice, env)
            return (base[0], (*base[1], "*" if segment is None else segment))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in METHODS
        ):
            base = chain(node.func.value, env)
            if base is None:
                return None
            for arg in node.args:
                visit(arg, env)
            method = node.func.attr
            if method == "get":
                segment = _const_segment(node.args[0]) if node.args else None
                return (base[0], (*base[1], "*" if segment is None else segment))
            if method == "values":
                return (base[0], (*base[1], "*"))
            found.add(base)
            return None  # a method's value is no longer a state path
        return None

    def visit(node: ast.AST, env: dict[str, Path]) -> None:
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            inner = comprehension(node, env)
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for elt in elts:
                visit(elt, inner)
            return
        if isinstance(node, ast.expr) and resolve(node, env) is not None:
            return
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in METHODS
            and chain(node.func.value, env) is not None
        ):
            return  # a method on a state path: its receiver and arguments are recorded
        for child in ast.iter_child_nodes(node):
            visit(child, env)

    visit(tree, {})
    return frozenset(found)


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return []


def _args_read(tree: ast.expr, roots: frozenset[str]) -> frozenset[str]:
    if "args" not in roots:
        return frozenset()

    def is_args(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == "args"

    names: set[str] = set()
    method_funcs: set[int] = set()  # `args.get` in `args.get(...)` is a method, not a key
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in METHODS
        ):
            method_funcs.add(id(node.func))
            if node.func.attr == "get" and is_args(node.func.value) and node.args:
                key = node.args[0]
                if isinstance(key, ast.Constant) and type(key.value) is str:
                    names.add(key.value)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_args(node.value):
            if id(node) not in method_funcs:
                names.add(node.attr)
        elif isinstance(node, ast.Subscript) and is_args(node.value):
            key = node.slice
            if isinstance(key, ast.Constant) and type(key.value) is str:
                names.add(key.value)
    return frozenset(names)


def _args_by_name(tree: ast.expr, roots: frozenset[str]) -> bool:
    """Whether every use of ``args`` reads one key named by a string constant (``args.x``,
    ``args["x"]``, ``args.get("x"[, d])``): then the value depends on `args_read` alone."""
    if "args" not in roots:
        return True
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def str_constant(node: ast.expr) -> bool:
        return isinstance(node, ast.Constant) and type(node.value) is str

    def reads_one_key(name: ast.Name) -> bool:
        parent = parents.get(id(name))
        if isinstance(parent, ast.Subscript):
            return parent.value is name and str_constant(parent.slice)
        if not (isinstance(parent, ast.Attribute) and parent.value is name):
            return False
        call = parents.get(id(parent))
        if isinstance(call, ast.Call) and call.func is parent and parent.attr in METHODS:
            return parent.attr == "get" and bool(call.args) and str_constant(call.args[0])
        return True

    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "args"]
    return all(reads_one_key(n) for n in names)

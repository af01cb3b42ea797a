"""The language's whitelist and limits: roots, callable functions and methods with their
arities, literal and result sizes, the step budget, nesting depth."""

from __future__ import annotations

DEFAULT_ROOTS: frozenset[str] = frozenset({"pre", "post", "args", "result"})


DEFAULT_BUDGET = 200_000


MAX_INT_LITERAL = 10**18


MAX_STR_LITERAL = 10_000


MAX_SEQUENCE = 100_000  # longest string / list / tuple an operation may build


MAX_INT_RESULT = 10**100


MAX_INT_PARSE = 10_000  # longest string int() / float() will parse


MAX_COMPREHENSION_DEPTH = 2


MAX_NESTING = 60  # AST depth; keeps the recursive validator and interpreter far from the C stack


# Builtins and methods with their (min, max) positional arity; max None = unbounded.
BUILTINS: dict[str, tuple[int, int | None]] = {
    "len": (1, 1),
    "sum": (1, 2),
    "min": (1, None),
    "max": (1, None),
    "abs": (1, 1),
    "any": (1, 1),
    "all": (1, 1),
    "sorted": (1, 1),
    "set": (0, 1),
    "int": (1, 1),
    "float": (1, 1),
    "str": (1, 1),
    "bool": (1, 1),
    "round": (1, 2),
    "sha256": (1, 1),
}


METHODS: dict[str, tuple[int, int | None]] = {
    "keys": (0, 0),
    "values": (0, 0),
    "items": (0, 0),
    "get": (1, 2),
    "count": (1, 1),
    "index": (1, 1),
    "startswith": (1, 1),
    "endswith": (1, 1),
    "lower": (0, 0),
    "upper": (0, 0),
    "strip": (0, 1),
    "split": (0, 1),
}


_SIGNATURES: dict[str, str] = {
    "len": "len(x)",
    "sum": "sum(xs) or sum(xs, start)",
    "min": "min(xs) or min(a, b, ...)",
    "max": "max(xs) or max(a, b, ...)",
    "abs": "abs(x)",
    "any": "any(xs)",
    "all": "all(xs)",
    "sorted": "sorted(xs)",
    "set": "set() or set(xs)",
    "int": "int(x)",
    "float": "float(x)",
    "str": "str(x)",
    "bool": "bool(x)",
    "round": "round(x) or round(x, ndigits)",
    "sha256": "sha256(s)",
    "keys": "x.keys()",
    "values": "x.values()",
    "items": "x.items()",
    "get": "x.get(key) or x.get(key, default)",
    "count": "xs.count(v)",
    "index": "xs.index(v)",
    "startswith": "s.startswith(prefix)",
    "endswith": "s.endswith(suffix)",
    "lower": "s.lower()",
    "upper": "s.upper()",
    "strip": "s.strip() or s.strip(chars)",
    "split": "s.split() or s.split(sep)",
}


_CALL_HINTS: dict[str, str] = {
    "range": "iterate over a list or object from the state instead",
    "getattr": "write x.name or x['name']",
    "hasattr": "write 'name' in x",
    "list": "write a list comprehension [v for v in xs]",
    "dict": "write a dict comprehension {k: v for k, v in xs.items()}",
    "tuple": "write a tuple display (a, b)",
    "isinstance": "compare with None or test the value itself",
    "type": "compare with None or test the value itself",
    "enumerate": "iterate .items() of an object, or index a list directly",
    "zip": "index the lists directly",
    "reversed": "use sorted(xs) or a slice xs[::-1]",
}


_METHOD_KINDS: dict[str, str] = {
    **dict.fromkeys(("keys", "values", "items", "get"), "objects"),
    **dict.fromkeys(("count", "index"), "lists"),
    **dict.fromkeys(("startswith", "endswith", "lower", "upper", "strip", "split"), "strings"),
}


_METHOD_LIST = (
    "keys() values() items() get() on objects, count() index() on lists, "
    "startswith() endswith() lower() upper() strip() split() on strings"
)


_FUNCTION_LIST = ", ".join(BUILTINS)

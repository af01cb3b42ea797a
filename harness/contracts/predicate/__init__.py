"""Predicates: a small, safe expression language over JSON state.

A predicate is one Python *expression* (never statements) over the roots ``pre`` (state
before the call), ``post`` (state after), ``args`` (the call's arguments) and ``result``
(its return value)::

    post.bank.accounts[args.src].balance == pre.bank.accounts[args.src].balance - args.amount
    all(r.quantity > 0 for r in post.inventory.reservations.values())
    args.price is None or post.inventory.items[args.sku].price == args.price

The text is parsed with ``ast``, checked against a whitelist once (`compile_predicate`,
which raises `PredicateError`), compiled once into closures, one per node, and evaluated
with a step budget. Python's own ``eval`` is never used.

Language
--------
- Names: the roots, comprehension variables, and the functions below (only when called).
- Literals: None, True, False, ints (``abs <= 10**18``), floats, strings (<= 10 000 chars);
  tuple, list, set and dict displays.
- ``x.name`` reads key ``name`` of an object (a missing key is `MissingPath`); names that
  start with ``_`` are rejected: write ``x["_name"]``. ``x[k]`` reads a key, list index
  or character (missing is `AbsentKey`); ``x[a:b:c]`` slices with int bounds.
- Methods, only as ``x.m(...)``: objects ``keys() values() items() get(k[, default])``;
  lists ``count(v) index(v)``; strings ``startswith(s) endswith(s) lower() upper()
  strip([chars]) split([sep])``. ``x.values`` without a call reads the key ``"values"``.
  ``keys()`` is a set, ``values()`` a list, ``items()`` a list of (key, value) pairs.
- Functions: len sum min max abs any all sorted set int float str bool round sha256;
  positional arguments only (no ``key=``). ``sha256(s)`` is the hex SHA-256 digest of the
  UTF-8 bytes of string ``s`` (observation clauses compare digests recorded at issue).
- Operators: ``and or not``, unary ``- +``, ``+ - * / // %`` (no ``**``, no bit operators;
  ``-`` on sets is difference), comparisons ``== != < <= > >= in not in`` (chains
  allowed), ``is`` / ``is not`` only against None, ``a if c else b``.
- Comprehensions: list, set, dict and generator, with ``if`` filters; the target is a
  name or a tuple of names; at most 2 ``for`` clauses along any nesting chain.

Semantics
---------
- ``==``, ``!=``, ``in`` and ``count``/``index`` use the harness's canonical equality
  (`harness.targets.equality.canonical_equal`): type-strict, so ``True != 1`` and
  ``2 != 2.0`` unless the policy admits the numeric tower. Tuples compare like lists;
  sets compare by canonical membership. ``k in obj`` tests keys, ``v in list`` elements,
  ``s in str`` substrings. Iterating an object iterates its keys.
- Ordering (``<``, min, max, sorted) is defined between numbers, between strings, and
  between lists (or tuples) of those; anything else is a `PredicateTypeError`.
- Every node evaluated and every element iterated or built costs a step (default budget
  200 000). Exceeding the budget, building a string or list longer than 100 000 with
  ``+``, ``*`` or ``str()``, an int beyond ``10**100``, or ``int()``/``float()`` of a
  string longer than 10 000 raises `BudgetExceeded`.
- `Predicate.holds` treats `AbsentKey` (a clause about a record that is not there) as
  False; the other runtime errors propagate, each carrying a ``reason`` code.

Layout: `language` (the whitelist and limits), `errors`, `values` (helpers over values),
`validator` (compile-time checks), `read_sets` (what a predicate reads), `interpreter`
(the closures, one per node, and the value operations they share, with a step budget) and
`compiled` (`compile_predicate`, `Predicate`). This package re-exports the public names;
all of it is in the reference checker's freeze scope.
"""

from harness.contracts.predicate.compiled import Predicate, compile_predicate
from harness.contracts.predicate.errors import (
    AbsentKey,
    BudgetExceeded,
    MissingPath,
    PredicateError,
    PredicateRuntimeError,
    PredicateTypeError,
)
from harness.contracts.predicate.language import DEFAULT_BUDGET, DEFAULT_ROOTS

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_ROOTS",
    "AbsentKey",
    "BudgetExceeded",
    "MissingPath",
    "Predicate",
    "PredicateError",
    "PredicateRuntimeError",
    "PredicateTypeError",
    "compile_predicate",
]

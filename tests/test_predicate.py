"""The predicate language: evaluation, type-strict equality, errors, read sets, hostility."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.contracts.predicate import (
    DEFAULT_ROOTS,
    AbsentKey,
    BudgetExceeded,
    MissingPath,
    Predicate,
    PredicateError,
    PredicateRuntimeError,
    PredicateTypeError,
    compile_predicate,
)
from harness.targets.equality import EqualityPolicy

PRE: dict[str, Any] = {
    "bank": {
        "accounts": {
            "alice": {"balance": 100, "owner": "Alice Smith", "tags": ["vip", "eu"]},
            "bob": {"balance": 20, "owner": "Bob Jones", "tags": []},
        },
        "log": [1, 2, 3],
    },
    "inventory": {
        "items": {"sku1": {"price": 2.5, "stock": 3}, "sku2": {"price": 10.0, "stock": 0}},
        "reservations": {
            "r1": {"sku": "sku1", "quantity": 2},
            "r2": {"sku": "sku1", "quantity": 1},
        },
    },
    "note": None,
}
POST: dict[str, Any] = {
    "bank": {
        "accounts": {
            "alice": {"balance": 70, "owner": "Alice Smith", "tags": ["vip", "eu"]},
            "bob": {"balance": 50, "owner": "Bob Jones", "tags": []},
        },
        "log": [1, 2, 3, 4],
    },
    "inventory": {
        "items": {"sku1": {"price": 3.0, "stock": 3}, "sku2": {"price": 10.0, "stock": 0}},
        "reservations": {"r1": {"sku": "sku1", "quantity": 2}},
    },
    "note": None,
}
ARGS: dict[str, Any] = {"from_account": "alice", "to_account": "bob", "amount": 30, "sku": "sku1"}
BINDINGS: dict[str, Any] = {"pre": PRE, "post": POST, "args": ARGS, "result": {"ok": True}}


def ev(text: str, bindings: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    return compile_predicate(text).evaluate(BINDINGS if bindings is None else bindings, **kwargs)


# --------------------------------------------------------------------------------------
# Happy evaluations


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # dotted access and subscripts by args
        (
            "post.bank.accounts[args.from_account].balance"
            " == pre.bank.accounts[args.from_account].balance - args.amount",
            True,
        ),
        (
            "post.bank.accounts[args.to_account].balance"
            " == pre.bank.accounts[args.to_account].balance + args.amount",
            True,
        ),
        ("post.bank.log[-1]", 4),
        ("post.bank.log[1:3]", [2, 3]),
        ("post.bank.log[::2]", [1, 3]),
        ('pre["bank"]["accounts"]["bob"]["balance"]', 20),
        ("pre.bank.accounts.alice.owner[0]", "A"),
        # comprehensions over .values() / .items()
        ("all(r.quantity > 0 for r in post.inventory.reservations.values())", True),
        ("[k for k, r in pre.inventory.reservations.items() if r.quantity > 1]", ["r1"]),
        ("{k: a.balance for k, a in post.bank.accounts.items()}", {"alice": 70, "bob": 50}),
        ("sorted({r.sku for r in pre.inventory.reservations.values()})", ["sku1"]),
        ("[a + b for a in pre.bank.log for b in [10, 20] if a != 2]", [11, 21, 13, 23]),
        ("[k for k in pre.bank.accounts]", ["alice", "bob"]),  # iterating an object: keys
        # builtins
        ("sum(a.balance for a in post.bank.accounts.values())", 120),
        ("sum(pre.bank.log, 10)", 16),
        ("len(post.bank.log)", 4),
        ("len(post.bank.accounts)", 2),
        ("min(pre.bank.log)", 1),
        ("max(pre.bank.log)", 3),
        ("max(3, 7, 5)", 7),
        ("sorted([3, 1, 2])", [1, 2, 3]),
        ("sorted(pre.bank.accounts.keys())", ["alice", "bob"]),
        ("any(t == 'eu' for t in pre.bank.accounts.alice.tags)", True),
        ("all(a.balance > 50 for a in post.bank.accounts.values())", False),
        ("abs(-4)", 4),
        ("round(2.567, 2)", 2.57),
        ("int('42') + int(2.9)", 44),
        ("float('1.5')", 1.5),
        ("str(12) + 'x'", "12x"),
        ("bool(pre.bank.accounts.bob.tags)", False),
        ("len(set(pre.bank.log + post.bank.log))", 4),
        # is None, IfExp
        ("pre.note is None", True),
        ("pre.note is not None", False),
        ("args.get('price') is None or post.inventory.items[args.sku].price == args.price", True),
        ("'rich' if pre.bank.accounts.alice.balance > 50 else 'poor'", "rich"),
        # in on object / list / str
        ("args.from_account in post.bank.accounts", True),
        ("'carol' in post.bank.accounts", False),
        ("'carol' not in post.bank.accounts", True),
        ("4 in post.bank.log", True),
        ("4 in pre.bank.log", False),
        ("'Smith' in pre.bank.accounts.alice.owner", True),
        ("'vip' in pre.bank.accounts.alice.tags", True),
        ("{'sku': 'sku1', 'quantity': 2} in post.inventory.reservations.values()", True),
        # chained comparisons
        ("0 < post.bank.accounts.bob.balance <= 50", True),
        ("0 < post.bank.accounts.bob.balance < 50", False),
        ("1 < 2 > 0", True),
        # and / or return operands and short-circuit
        ("pre.note or 'default'", "default"),
        ("pre.bank.log and 'nonempty'", "nonempty"),
        ("0 and pre.no_such_key", 0),  # the right side would raise MissingPath
        ("1 or pre.no_such_key", 1),
        ("not pre.bank.accounts.bob.tags", True),
        # arithmetic
        ("7 // 2 + 7 % 2 + 1 / 4", 4.25),
        ("-pre.bank.log[0] + +2", 1),
        ("'ab' * 2 + 'c'", "ababc"),
        ("[0] * 3", [0, 0, 0]),
        ("(1, 2) + (3,)", (1, 2, 3)),
        # methods
        ("post.inventory.items.get('nope', 'fallback')", "fallback"),
        ("post.inventory.items.get('nope')", None),
        ("pre.bank.log.count(2)", 1),
        ("pre.bank.log.index(3)", 2),
        ("pre.bank.accounts.bob.owner.lower().startswith('bob')", True),
        ("pre.bank.accounts.bob.owner.upper().endswith('JONES')", True),
        ("'  x '.strip()", "x"),
        ("pre.bank.accounts.alice.owner.split()", ["Alice", "Smith"]),
        ("'a,b'.split(',')", ["a", "b"]),
        # set difference and set equality (keys() is a set)
        ("set(post.bank.accounts.keys()) - {'bob'}", frozenset({"alice"})),
        ("post.bank.accounts.keys() == {'bob', 'alice'}", True),
        ("post.inventory.reservations.keys() == pre.inventory.reservations.keys()", False),
        # tuples compare like lists; items() yields pairs
        ("(1, 2) == [1, 2]", True),
        ("[(k, v.quantity) for k, v in post.inventory.reservations.items()] == [['r1', 2]]", True),
    ],
)
def test_happy_evaluations(text: str, expected: Any) -> None:
    value = ev(text)
    assert value == expected
    assert type(value) is type(expected)


def test_result_root_and_holds() -> None:
    assert compile_predicate("result.ok == True").holds(BINDINGS)
    assert not compile_predicate("result.ok == False").holds(BINDINGS)


def test_comprehension_variables_do_not_leak_and_nest() -> None:
    text = "[[b for b in pre.bank.log if b > a] for a in pre.bank.log]"
    assert ev(text) == [[2, 3], [3], []]


def test_any_all_short_circuit_on_generators() -> None:
    # The 2nd element would raise (no key "x"); any() stops at the 1st.
    state = {"pre": {"rows": [{"x": 1}, {}]}}
    assert ev("any(r.x == 1 for r in pre.rows)", state) is True
    assert ev("all(r.x == 2 for r in pre.rows)", state) is False
    with pytest.raises(MissingPath):
        ev("all(r.x == 1 for r in pre.rows)", state)


# --------------------------------------------------------------------------------------
# Type-strict equality


def test_bool_is_not_int() -> None:
    p = compile_predicate("args.a == 1")
    assert p.evaluate({"args": {"a": 1}}) is True
    assert p.evaluate({"args": {"a": True}}) is False
    assert compile_predicate("args.a != 1").evaluate({"args": {"a": True}}) is True
    assert compile_predicate("True in args.xs").evaluate({"args": {"xs": [1, 2]}}) is False
    assert compile_predicate("1 in args.xs").evaluate({"args": {"xs": [True]}}) is False
    assert compile_predicate("args.xs.count(1)").evaluate({"args": {"xs": [1, True, 1]}}) == 2


def test_int_is_not_float_unless_numeric_tower() -> None:
    p = compile_predicate("args.a == 2")
    assert p.evaluate({"args": {"a": 2.0}}) is False
    assert p.evaluate({"args": {"a": 2.0}}, policy=EqualityPolicy(numeric_tower=True)) is True
    assert p.holds({"args": {"a": 2.0}}, policy=EqualityPolicy(numeric_tower=True))
    nested = compile_predicate("post.x == [1, {'y': 2}]")
    assert nested.evaluate({"post": {"x": [1, {"y": 2.0}]}}) is False
    assert nested.evaluate(
        {"post": {"x": [1, {"y": 2.0}]}}, policy=EqualityPolicy(numeric_tower=True)
    )


def test_sets_and_keys_are_type_strict() -> None:
    assert ev("len({1, True, 1.0})") == 3
    assert ev("len({1, True, 1.0})", policy=EqualityPolicy(numeric_tower=True)) == 2
    assert ev("True in {1}") is False
    assert ev("1 in {1: 'a'}") is True
    assert ev("True in {1: 'a'}") is False
    with pytest.raises(AbsentKey):
        ev("{1: 'a'}[True]")


# --------------------------------------------------------------------------------------
# Runtime errors


def test_missing_path_names_the_dotted_path() -> None:
    with pytest.raises(MissingPath, match=r"post\.bank\.acounts") as info:
        ev("post.bank.acounts")
    assert info.value.reason == "no_observable_state"


def test_unbound_root_is_missing_path() -> None:
    p = compile_predicate("post.bank.log == pre.bank.log")
    with pytest.raises(MissingPath, match="post"):
        p.evaluate({"pre": PRE})
    with pytest.raises(MissingPath):
        p.holds({"pre": PRE})  # holds() only forgives AbsentKey


def test_absent_key_and_holds() -> None:
    p = compile_predicate("post.bank.accounts[args.who].balance > 0")
    with pytest.raises(AbsentKey, match="carol") as info:
        p.evaluate({"post": POST, "args": {"who": "carol"}})
    assert info.value.reason == "absent_key"
    assert p.holds({"post": POST, "args": {"who": "carol"}}) is False
    assert p.holds({"post": POST, "args": {"who": "bob"}}) is True
    with pytest.raises(AbsentKey, match="out of range"):
        ev("pre.bank.log[10]")
    assert compile_predicate("pre.bank.log[-4] == 1").holds(BINDINGS) is False


@pytest.mark.parametrize(
    "text",
    [
        "pre.bank.log.balance",  # attribute on a list
        "pre.note.x",  # attribute on None
        "pre.bank.log['a']",  # list index must be int
        "pre.bank.accounts.values().lower()",  # str method on a list
        "pre.bank.log.keys()",  # dict method on a list
        "pre.bank.accounts.count(1)",  # list method on a dict
        "'a' + 1",
        "1 / 0",
        "5 % 0",
        "pre.note < 1",
        "min([])",
        "int('x')",
        "int(float('inf'))",
        "sorted([1, 'a'])",
        "1 in 'abc'",
        "1 in 5",
        "len(5)",
        "sum(['a'])",
        "pre.bank.log.index(99)",
        "[k for k, v in pre.bank.log]",  # cannot unpack an int
        "(x for x in pre.bank.log)",  # a generator is not a value
        "(x for x in [1]) == [1]",
        "'abc'.split('')",
        "round('a')",
        "{[1]: 2}",
        "pre.bank.accounts < pre.bank.accounts",
    ],
)
def test_type_errors(text: str) -> None:
    with pytest.raises(PredicateTypeError) as info:
        ev(text)
    assert info.value.reason == "predicate_type_error"
    assert "\n" not in str(info.value)


def test_type_error_message_carries_source_text() -> None:
    with pytest.raises(PredicateTypeError, match=r"pre\.bank\.log\.balance"):
        ev("pre.bank.accounts.bob.balance > 0 and pre.bank.log.balance")


def test_error_hierarchy_and_reasons() -> None:
    assert issubclass(PredicateError, ValueError)
    for cls, reason in [
        (MissingPath, "no_observable_state"),
        (AbsentKey, "absent_key"),
        (PredicateTypeError, "predicate_type_error"),
        (BudgetExceeded, "predicate_budget_exceeded"),
    ]:
        assert issubclass(cls, PredicateRuntimeError)
        assert cls.reason == reason


def test_values_without_call_is_a_key() -> None:
    assert ev("post.x.values", {"post": {"x": {"values": 5}}}) == 5
    assert ev("post.x.values()", {"post": {"x": {"values": 5}}}) == [5]
    assert ev("post.x['_secret']", {"post": {"x": {"_secret": 1}}}) == 1


# --------------------------------------------------------------------------------------
# Read sets


@pytest.mark.parametrize(
    ("text", "args_read", "paths_read"),
    [
        (
            "post.bank.accounts[args.from_account].balance"
            " == pre.bank.accounts[args.from_account].balance - args.amount",
            {"from_account", "amount"},
            {
                ("post", ("bank", "accounts", "*", "balance")),
                ("pre", ("bank", "accounts", "*", "balance")),
                ("args", ("from_account",)),
                ("args", ("amount",)),
            },
        ),
        (
            "all(r.quantity > 0 for r in post.inventory.reservations.values())",
            set(),
            {("post", ("inventory", "reservations", "*"))},
        ),
        (
            "args.price is None or post.inventory.items[args.sku].price == args.price",
            {"price", "sku"},
            {
                ("args", ("price",)),
                ("args", ("sku",)),
                ("post", ("inventory", "items", "*", "price")),
            },
        ),
        (
            'len(pre.log) < len(post.log) and post["log"][0] == args["first"]',
            {"first"},
            {("pre", ("log",)), ("post", ("log",)), ("post", ("log", "0")), ("args", ("first",))},
        ),
        (
            "sorted(post.users.keys()) == sorted(k for k, v in pre.users.items())",
            set(),
            {("post", ("users",)), ("pre", ("users", "*"))},
        ),
        (
            "post.a.get('b', args.d).c == args.get('e') and result",
            {"d", "e"},
            {
                ("post", ("a", "b", "c")),
                ("args", ("d",)),
                ("args", ("e",)),
                ("result", ()),
            },
        ),
        (
            "post.log[1:][0] == pre.name.lower()",
            set(),
            {("post", ("log",)), ("pre", ("name",))},
        ),
    ],
)
def test_read_sets(text: str, args_read: set[str], paths_read: set[Any]) -> None:
    p = compile_predicate(text)
    assert p.args_read == frozenset(args_read)
    assert p.paths_read == frozenset(paths_read)


def test_predicate_value_object() -> None:
    p = compile_predicate("post.x == 1")
    assert p.text == "post.x == 1"
    assert p.roots == DEFAULT_ROOTS
    assert p == compile_predicate("post.x == 1")
    assert hash(p) == hash(compile_predicate("post.x == 1"))
    # Built directly, it is still validated before it can run.
    direct = Predicate("post.x == 1", DEFAULT_ROOTS, frozenset(), frozenset())
    assert direct.evaluate({"post": {"x": 1}}) is True
    with pytest.raises(PredicateError):
        Predicate("open('f')", DEFAULT_ROOTS, frozenset(), frozenset())


def test_custom_roots() -> None:
    p = compile_predicate("state.x > 0", roots=frozenset({"state"}))
    assert p.evaluate({"state": {"x": 1}}) is True
    assert p.paths_read == frozenset({("state", ("x",))})
    with pytest.raises(PredicateError, match="name 'post' is not defined"):
        compile_predicate("post.x", roots=frozenset({"state"}))


# --------------------------------------------------------------------------------------
# Compile-time rejection


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pre.__class__", "'__class__' is not allowed"),
        ("().__class__.__bases__[0].__subclasses__()", "'_"),
        ("__import__('os').system('true')", "'__import__' is not allowed"),
        ("getattr(pre, 'x')", "'getattr' is not allowed"),
        ("open('/etc/passwd')", "'open' is not allowed"),
        ("[x for x in range(10**9)]", "not allowed"),
        ("2 ** 1000", r"\*\* is not allowed"),
        ("(lambda: 1)()", "lambda is not allowed"),
        ("[y for y in [z for z in [w for w in pre.a]]]", "comprehensions nested more than 2 deep"),
        (
            "[[1 for a in pre.x] for b in pre.x for c in pre.x]",
            "comprehensions nested more than 2 deep",
        ),
        ("[a for a in pre.x for b in pre.x for c in pre.x]", "nested more than 2 deep"),
        ("any(any(any(w for w in v) for v in u) for u in pre.x)", "nested more than 2 deep"),
        ("(x := 1)", "assignment expressions"),
        ('f"{pre}"', "f-strings are not allowed"),
        ("sorted(pre.a, key=len)", "keyword argument key= is not allowed"),
        ("pre._secret", "'_secret' is not allowed"),
        ("foo", "name 'foo' is not defined: predicates may read pre, post, args, result"),
        ("len", "'len' can only be called"),
        ("pre.x | post.x", "operator | is not allowed"),
        ("pre.x & 1", "operator & is not allowed"),
        ("1 << 3", "operator << is not allowed"),
        ("~pre.x", "operator ~ is not allowed"),
        ("pre.x @ pre.y", "operator @ is not allowed"),
        ("pre.x is post.x", "`is` is only allowed with None"),
        ("pre.x is 1", "`is` is only allowed with None"),
        ("b'abc'", "bytes literal"),
        ("...", "literal"),
        ("1j", "complex literal"),
        ("10000000000000000000", "larger than 10\\*\\*18"),
        ("'" + "a" * 10_001 + "'", "longer than 10000"),
        ("[*pre.x]", r"\* unpacking is not allowed"),
        ("len(*pre.x)", r"\* unpacking is not allowed"),
        ("{**pre.x}", r"\*\* unpacking in a dict display is not allowed"),
        ("max(pre.x, **pre.y)", r"\*\*mapping arguments are not allowed"),
        ("pre.x.pop()", r"method \.pop\(\) is not allowed"),
        ("pre.x.format(1)", r"method \.format\(\) is not allowed"),
        ("pre.x.get()", r"get\(\) does not take 0"),
        ("len(pre.x, pre.y)", r"len\(\) does not take 2"),
        ("type(pre)", "'type' is not allowed"),
        ("eval('1')", "'eval' is not allowed"),
        ("pre()", "'pre' is not allowed"),
        ("pre.x()", r"method \.x\(\) is not allowed"),
        ("pre.f[0](1)", "cannot be called"),
        ("[pre for pre in post.x]", "shadows the root 'pre'"),
        ("[len for len in post.x]", "shadows the function 'len'"),
        ("[x for x.y in post.x]", "comprehension target"),
        ("[x for (x, (y, z)) in post.x]", "comprehension target"),
        ("x", "name 'x' is not defined"),
        ("[x for x in post.x] + [x]", "name 'x' is not defined"),  # no leaking
        ("[y for x in x for y in post.a]", "name 'x' is not defined"),  # 1st iterable: outer
        ("post.x ==", "not a Python expression"),
        ("x = 1", "not a Python expression"),
        ("", "not a Python expression"),
        ("pre.x[1:2, 3]", "Slice"),
        ("-" * 200 + "1", "nested more than 60 levels"),
        ("+".join(["1"] * 500), "nested more than 60 levels"),
    ],
)
def test_compile_time_rejection(text: str, message: str) -> None:
    with pytest.raises(PredicateError, match=message) as info:
        compile_predicate(text)
    text_of_error = str(info.value)
    assert "\n" not in text_of_error
    assert ":" in text_of_error  # what is wrong: what to write instead


def test_multiline_predicates_need_parentheses() -> None:
    with pytest.raises(PredicateError, match="wrap a multi-line predicate in parentheses"):
        compile_predicate("pre.x > 0\n and post.x > 0")
    p = compile_predicate("(pre.x > 0\n and post.x > 0)")
    assert p.evaluate({"pre": {"x": 1}, "post": {"x": 2}}) is True


def test_two_deep_comprehensions_are_allowed() -> None:
    assert ev("[y for y in [z for z in pre.bank.log]]") == [1, 2, 3]
    assert ev("sum(a * b for a in pre.bank.log for b in pre.bank.log)") == 36
    assert ev("all(all(t != 'x' for t in a.tags) for a in pre.bank.accounts.values())") is True


def test_async_comprehension_rejected() -> None:
    with pytest.raises(PredicateError, match="not allowed"):
        compile_predicate("[x async for x in pre.x]")


def test_hostile_text_is_never_executed(tmp_path: Any) -> None:
    # If the text were executed, this would create a file.
    marker = tmp_path / "pwned"
    for text in [
        f"__import__('pathlib').Path({str(marker)!r}).touch()",
        f"open({str(marker)!r}, 'w')",
    ]:
        with pytest.raises(PredicateError):
            compile_predicate(text)
    assert not marker.exists()


# --------------------------------------------------------------------------------------
# Runtime guards

BIG = list(range(1000))


@pytest.mark.parametrize(
    ("text", "bindings", "budget"),
    [
        ("'a' * 1000000000", {}, 200_000),
        ("1000000000 * 'a'", {}, 200_000),
        ("[0] * 1000000000", {}, 200_000),
        ("(0,) * 1000000000", {}, 200_000),
        ("pre.s + pre.s", {"pre": {"s": "x" * 60_000}}, 200_000),
        ("sum(x * y for x in pre.big for y in pre.big)", {"pre": {"big": BIG}}, 5_000),
        ("[[x, y] for x in pre.big for y in pre.big]", {"pre": {"big": BIG}}, 5_000),
        ("len(str(pre.big))", {"pre": {"big": ["x" * 1000] * 200}}, 200_000),
        ("len(str(pre.big))", {"pre": {"big": BIG}}, 100),
        (
            "1000000000000000000 * 1000000000000000000 * 1000000000000000000"
            " * 1000000000000000000 * 1000000000000000000 * 1000000000000000000",
            {},
            200_000,
        ),
        ("int(pre.s)", {"pre": {"s": "1" * 20_000}}, 200_000),
        ("int(pre.s)", {"pre": {"s": "9" * 200}}, 200_000),
        ("abs(pre.n)", {"pre": {"n": -(10**150)}}, 200_000),
        ("pre.big == pre.big", {"pre": {"big": BIG}}, 500),
        ("999 in pre.big", {"pre": {"big": BIG}}, 500),
        ("sorted(pre.big)", {"pre": {"big": BIG}}, 500),
        ("[x for x in pre.big]", {"pre": {"big": BIG}}, 500),
        ("set(pre.big)", {"pre": {"big": BIG}}, 500),
        ("pre.big[:]", {"pre": {"big": BIG}}, 500),
    ],
)
def test_budget_guards(text: str, bindings: dict[str, Any], budget: int) -> None:
    start = time.perf_counter()
    with pytest.raises(BudgetExceeded) as info:
        compile_predicate(text).evaluate(bindings, budget=budget)
    assert info.value.reason == "predicate_budget_exceeded"
    assert time.perf_counter() - start < 0.5


def test_round_with_huge_digits_is_clamped_not_computed() -> None:
    start = time.perf_counter()
    assert ev("round(5, -1000000000000000000)") == 0
    assert ev("round(1.25, 1000000000000000000)") == 1.25
    assert time.perf_counter() - start < 0.5


def test_budget_is_not_hit_by_ordinary_work() -> None:
    p = compile_predicate("sum(x for x in pre.big) == 499500")
    assert p.evaluate({"pre": {"big": BIG}}) is True
    with pytest.raises(BudgetExceeded):
        p.evaluate({"pre": {"big": BIG}}, budget=999)


def test_deeply_nested_data_does_not_escape_as_recursion_error() -> None:
    deep: Any = 0
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(PredicateRuntimeError):
        compile_predicate("pre.d == post.d").evaluate({"pre": {"d": deep}, "post": {"d": deep}})


@pytest.mark.parametrize(
    "text",
    [
        "pre.a + pre.b",
        "pre.a * pre.b",
        "pre.a - pre.b",
        "pre.a / pre.b",
        "pre.a // pre.b",
        "pre.a % pre.b",
        "pre.a < pre.b",
        "pre.a in pre.b",
        "pre.a == pre.b",
        "-pre.a",
        "len(pre.a)",
        "sum(pre.a)",
        "min(pre.a)",
        "max(pre.a, pre.b)",
        "sorted(pre.a)",
        "set(pre.a)",
        "int(pre.a)",
        "float(pre.a)",
        "str(pre.a)",
        "round(pre.a, pre.b)",
        "abs(pre.a)",
        "pre.a[pre.b]",
        "pre.a[pre.b:pre.b]",
        "pre.a.get(pre.b)",
        "pre.a.split(pre.b)",
        "pre.a.startswith(pre.b)",
        "pre.a.index(pre.b)",
        "[x for x in pre.a]",
        "{x: x for x in pre.a}",
        "{pre.a, pre.b}",
    ],
)
def test_only_predicate_errors_escape(text: str) -> None:
    values: list[Any] = [None, True, 0, -1, 2.5, float("nan"), "", "ab", [], [1, [2]], {}, {"k": 1}]
    p = compile_predicate(text)
    escaped: list[str] = []
    outcomes = 0
    for a in values:
        for b in values:
            try:
                p.evaluate({"pre": {"a": a, "b": b}}, budget=10_000)
            except PredicateRuntimeError:
                pass
            except Exception as exc:  # the property under test: nothing else escapes
                escaped.append(f"{a!r}, {b!r}: {type(exc).__name__}: {exc}")
            outcomes += 1
    assert escaped == []
    assert outcomes == len(values) ** 2


def test_an_evaluated_predicate_pickles_without_its_closures() -> None:
    """A predicate's compiled closures are built on first use and left out of its pickle (a
    worker process receives predicates): the copy compiles its own and agrees."""
    import pickle

    p = compile_predicate("all([x > 1 for x in args.xs]) and args.a[1:] == [2]")
    assert p.evaluate({"args": {"xs": [2, 3], "a": [1, 2]}}) is True
    assert "_program" in p.__dict__
    copy = pickle.loads(pickle.dumps(p))
    assert "_program" not in copy.__dict__ and copy == p
    assert copy.evaluate({"args": {"xs": [2, 0], "a": [1, 2]}}) is False
    assert copy.evaluate({"args": {"xs": [], "a": [1, 2]}}) is True


@pytest.mark.parametrize(
    ("text", "args", "steps"),
    [
        # Compare, Attribute, Name, Constant: 4 nodes; == turns each side to JSON: 2 more
        ("args.a == 1", {"a": 1}, 6),
        # Call, ListComp, Attribute, Name: 4; 3 items iterated: 3; x > 1 on each (Compare,
        # Name, Constant): 9; x * 2 on the two that pass (BinOp, Name, Constant): 6; sum
        # iterates the two: 2
        ("sum([x * 2 for x in args.xs if x > 1])", {"xs": [1, 2, 3]}, 24),
        # Subscript, Attribute, Name; bounds Constant, Attribute, Name: 6; 3 chars built: 3
        ("args.s[1:args.n]", {"s": "abcdef", "n": 4}, 9),
        # Compare, Attribute, Name: 3; List and its 3 Constants: 4; `in` turns the needle to
        # JSON: 1, then each element up to the match: a step and its JSON, 2 each
        ("args.c in ['x', 'y', 'z']", {"c": "y"}, 3 + 4 + 1 + 2 * 2),
        ("args.c in ['x', 'y', 'z']", {"c": "q"}, 3 + 4 + 1 + 2 * 3),
        ("args.c in ['x', 'y', 'z']", {"c": 1}, 3 + 4 + 1 + 2 * 3),
        ("args.c in ['x', 2, 'z']", {"c": 2}, 3 + 4 + 1 + 2 * 2),
        # Compare, Subscript: 2; Dict and its 4 Constants: 5; key Attribute, Name: 2; a str
        # key found without a step; Constant 2: 1; == turns each side to JSON: 2
        ("{'a': 1, 'b': 2}[args.k] == 2", {"k": "b"}, 2 + 5 + 2 + 1 + 2),
        # Compare: 1; a list not all constants: List, Constant, Attribute, Name, Constant: 5;
        # one that is: 4; == turns each side to JSON, the list and its 3 items: 4 each
        ("[1, args.k, 'z'] == [1, 'b', 'z']", {"k": "b"}, 1 + 5 + 4 + 2 * 4),
    ],
)
def test_the_budget_is_one_step_per_node_evaluated_and_per_item(
    text: str, args: dict[str, Any], steps: int
) -> None:
    """Hand-counted: the budget runs out on the node where the count passes it, so a budget
    of exactly `steps` evaluates and one less does not."""
    p = compile_predicate(text)
    p.evaluate({"args": args}, budget=steps)
    with pytest.raises(BudgetExceeded, match=f"budget of {steps - 1} steps"):
        p.evaluate({"args": args}, budget=steps - 1)


SCALAR_DISPLAYS = [
    ("args.c in ['x', 'y', 'z']", {"c": "z"}),
    ("args.c in ['x', 'y', 'z']", {"c": ["z"]}),
    ("args.c not in ['x', 1, 2.5, True, None]", {"c": 1.0}),
    ("args.c in [1, 2, 3]", {"c": True}),
    ("{'a': 1, 'b': 2, 'a': 3}[args.k] * 2", {"k": "a"}),
    ("{1: 'x', True: 'y', 1.0: 'z'}", {}),
    ("len({'a': [], 'b': None}) + len([]) + len({})", {}),
    ("[x for x in ['b', 'a', 'c'] if x in args.s]", {"s": ["a", "c"]}),
    ("sorted({'b': 1, 'a': 2}.keys())[0] + ['q', 'r'][args.i]", {"i": -1}),
]


@pytest.mark.parametrize(("text", "args"), SCALAR_DISPLAYS)
def test_a_display_of_constants_built_once_counts_and_returns_what_it_did(
    monkeypatch: pytest.MonkeyPatch, text: str, args: dict[str, Any]
) -> None:
    """A list or dict display of constants is built when the predicate is compiled: with it
    and without it (every display built node by node, as before), each budget from 0 up
    gives the same value or the same error."""
    from harness.contracts.predicate import interpreter

    def outcomes() -> list[Any]:
        p = compile_predicate(text)  # a new predicate compiles its closures on first use
        seen: list[Any] = []
        for budget in range(60):
            try:
                seen.append(repr(p.evaluate({"args": args}, budget=budget)))
            except Exception as exc:
                seen.append(f"{type(exc).__name__}: {exc}")
        return seen

    folded = outcomes()
    monkeypatch.setattr(interpreter, "_all_scalars", lambda nodes: False)
    assert outcomes() == folded
    assert "BudgetExceeded" in folded[0] and "Budget" not in folded[-1]


def test_a_display_of_constants_is_a_new_value_each_time() -> None:
    import ast

    from harness.contracts.predicate.interpreter import _Interpreter, compile_program
    from harness.targets.equality import STRICT

    for text in ("['a', 1, None]", "{'a': 1, 'b': [2][0]}", "{'a': 1.5}"):
        run = compile_program(ast.parse(text, mode="eval").body)
        first = run(_Interpreter({}, STRICT, 100, text), {})
        second = run(_Interpreter({}, STRICT, 100, text), {})
        assert first == second == eval(text) and first is not second


def test_a_python_error_names_the_node_whose_own_operation_raised_it() -> None:
    with pytest.raises(PredicateTypeError, match=r"^`1 / x`: ZeroDivisionError"):
        ev("[1 / x for x in args.xs][0] == 1", {"args": {"xs": [0]}})
    with pytest.raises(PredicateTypeError, match=r"^`args.a // args.b`: ZeroDivisionError"):
        ev("args.a // args.b > 0", {"args": {"a": 1, "b": 0}})

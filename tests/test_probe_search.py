"""AssignmentSearch's truth memo: the same assignments and errors as evaluating every time."""

from __future__ import annotations

import pytest

from harness.checker import compile_target
from harness.checker.probes import AssignmentSearch, argument_pools
from harness.contracts.predicate import compile_predicate
from harness.targets.registry import load_target


@pytest.mark.parametrize(
    ("text", "by_name"),
    [
        ("args.x > 0", True),
        ("args['x'] == 1", True),
        ("args.get('x') is None", True),
        ("args.get('x', 2) == 1", True),
        ("pre.a[args.k] > 0", True),
        ("args.get == 1", True),  # the key "get", not the method
        ("post.x == 1", True),
        ("len(args) > 0", False),
        ("'x' in args", False),
        ("args == {}", False),
        ("len(args.keys()) == 1", False),
        ("[a for a in args]", False),
        ("args.get(args.k)", False),
        ("args[args.k]", False),
        ("args.get(1) is None", False),
    ],
)
def test_args_by_name(text, by_name):
    assert compile_predicate(text).args_by_name is by_name


class Unmemoised(AssignmentSearch):
    def truth(self, clause, args):
        return self._evaluate(clause, args)


def test_memoised_search_finds_what_evaluating_every_time_finds():
    target = load_target("toy_domain")
    compiled = compile_target(target)
    state = target.adapter.snapshot(target.adapter.fresh())
    for tool, contract in sorted(compiled.items()):
        pools = argument_pools(contract, state, 0, tool)
        memo, plain = AssignmentSearch(contract, pools, state), Unmemoised(contract, pools, state)
        happy = plain.find()
        assert memo.find() == happy, tool
        for clause in contract.preconditions:
            assert memo.find(clause.id, happy) == plain.find(clause.id, happy), (tool, clause.id)
        for name, pool in pools.items():
            for value in pool:
                args = {**(happy or {}), name: value}
                assert memo.truths(args) == plain.truths(args), (tool, name, value)
        assert list(memo.errors) == list(plain.errors), tool
        assert [str(e) for e in memo.errors.values()] == [str(e) for e in plain.errors.values()]


def test_a_list_argument_changed_in_place_is_evaluated_again():
    target = load_target("toy_domain")
    contract = next(c for c in compile_target(target).values() if c.preconditions)
    clause = contract.preconditions[0]
    predicate = compile_predicate("len(args.xs) == 0")
    search = AssignmentSearch(contract, {}, {})
    fake = type(clause)(clause.clause, predicate)
    xs: list[int] = []
    assert search.truth(fake, {"xs": xs}) is True
    xs.append(1)  # as a tool may do to the list it was passed
    assert search.truth(fake, {"xs": xs}) is False


def test_forget_drops_truths_about_a_state_a_tool_changed_in_place():
    target = load_target("toy_domain")
    contract = next(c for c in compile_target(target).values() if c.preconditions)
    clause = contract.preconditions[0]
    fake = type(clause)(clause.clause, compile_predicate("len(pre.xs) == 1"))
    state = {"xs": [1]}
    search = AssignmentSearch(contract, {}, state)
    assert search.truth(fake, {}) is True
    state["xs"].append(2)  # a harvested list, passed to a tool that kept and changed it
    search.forget()
    assert search.truth(fake, {}) is False


def test_passing_a_harvested_list_makes_the_check_forget_its_truths():
    from harness.checker.dynamic import ToolCheck

    target = load_target("toy_domain")
    compiled = compile_target(target)
    check = ToolCheck(target.adapter, compiled["book_meeting"], compiled)
    initial = check.snapshot(target.adapter.fresh())
    start = next(check.starts(initial))
    harvested = [
        v for v in start.pools["attendees"] if any(v is h for h in check._state_lists.values())
    ]
    assert harvested, "toy_domain's state has attendee lists"
    check._passed({"attendees": ["alice"]})  # a declared value: no state shares it
    assert not check._state_lists_passed
    check._passed({"attendees": harvested[0]})
    assert check._state_lists_passed
    start.search.truths({"attendees": []})
    check.forget_truths()
    assert not start.search._truths and not check._harvests


def _table_search(text: str, pool: list) -> AssignmentSearch:
    """A search over one argument `x` with one precondition `text`, due at `x`."""
    target = load_target("toy_domain")
    contract = next(c for c in compile_target(target).values() if c.preconditions)
    clause = contract.preconditions[0]
    search = AssignmentSearch(contract, {"x": pool}, {})
    search.order = ("x",)
    search._due = {0: [type(clause)(clause.clause, compile_predicate(text))]}
    return search


def test_a_search_tells_a_string_from_a_value_written_the_same():
    """A truth's key holds a str as it is and anything else by its repr (memoised while
    the search runs): the string "['a']" and the list ['a'] are two assignments."""
    search = _table_search("args.x == ['a']", ["['a']", ["a"]])
    assert search.find() == {"x": ["a"]}
    search = _table_search("args.x == 1", [True, 1.0, 1])
    assert search.find() == {"x": 1}
    assert search._reprs is None  # the memo lasts one search


def test_a_harvest_of_tables_is_the_whole_walk_and_shared_by_identical_states():
    """A state made of tables of records is harvested from its tables' partials: the same
    harvest as walking it whole; one harvest object for two states holding the very same
    records; a changed record, or a state with anything but tables, harvested anew."""
    from harness.checker import probes

    records = {f"u{i}": {"name": f"n{i}", "age": i, "tags": [f"t{i}"]} for i in range(50)}
    orders = {"o1": {"user": "u1", "items": [1, 2], "price": 2.5}}
    first = {"users": dict(records), "orders": dict(orders)}
    second = {"users": dict(records), "orders": dict(orders)}  # new tables, same records
    found = probes.harvest(first)
    assert found == probes._harvested(first, None)  # as the walk finds it
    assert probes.harvest(second) is found
    changed = {"users": {**records, "u3": {"name": "x", "age": 3, "tags": []}}, "orders": orders}
    again = probes.harvest(changed)
    assert again is not found and again == probes._harvested(changed, None)
    assert "x" in again.strings and "n3" not in again.strings
    mixed = {"users": dict(records), "count": 3}
    assert (
        probes.harvest(mixed) == probes._harvested(mixed, None) and 3 in probes.harvest(mixed).ints
    )
    hint = list[str]
    assert probes._fitting_lists(found, hint) == probes._fitting(found.lists, hint)
    assert probes._fitting_lists(found, hint) is probes._fitting_lists(probes.harvest(second), hint)


def test_the_harvest_memos_are_bounded_by_what_they_hold(monkeypatch):
    """Past their bound of items, the table and harvest memos are emptied and start again:
    the count they keep is what they hold, harvests found past the bound are the walk's,
    and a state seen again after the memo emptied is harvested anew, equal to before."""
    from harness.checker import probes

    monkeypatch.setattr(probes, "_TABLES", {})
    monkeypatch.setattr(probes, "_HARVESTS", {})
    monkeypatch.setattr(probes, "_held", {"tables": 0, "harvests": 0, "dropped": 0})
    monkeypatch.setattr(probes, "_HARVEST_ITEMS", 300)
    monkeypatch.setattr(probes, "_TABLE_ITEMS", 400)

    def state(i: int) -> dict:
        return {"users": {f"u{j}": {"name": f"n{i}-{j}", "age": j} for j in range(20)}}

    def held() -> tuple[int, int]:
        tables = sum(
            len(records) + probes._partial_size(partial)
            for kept in probes._TABLES.values()
            for records, partial in kept
        )
        harvests = sum(probes._harvest_size(found) for _, found in probes._HARVESTS.values())
        # and a whole harvest pins only partials the table memo keeps (so counts them)
        kept = {id(partial) for k in probes._TABLES.values() for _, partial in k}
        assert all(id(p) in kept for tables, _ in probes._HARVESTS.values() for p in tables)
        return tables, harvests

    states = [state(i) for i in range(12)]
    firsts = []
    for s in states:  # one set of keys: each table past the 4th pushes the oldest out
        firsts.append(probes.harvest(s))
        assert held() == (probes._held["tables"], probes._held["harvests"])
    assert 0 < probes._held["harvests"] <= 300 and 0 < probes._held["tables"] <= 400
    assert len(probes._HARVESTS) < len(states)  # emptied on the way
    assert all(f == probes._harvested(s, None) for f, s in zip(firsts, states, strict=True))
    again = probes.harvest(states[0])  # long gone from the memo
    assert again is not firsts[0] and again == firsts[0]
    assert probes.harvest(states[0]) is again  # and kept again
    assert held() == (probes._held["tables"], probes._held["harvests"])

    # tables of other keys each (no trimming to 4 a set of keys): the table memo's own bound
    def keyed(i: int) -> dict:
        return {"users": {f"u{i}-{j}": {"name": f"m{j}", "age": j} for j in range(20)}}

    keys_seen = []
    for i in range(12):
        found = probes.harvest(keyed(i))
        assert found == probes._harvested(keyed(i), None)
        keys_seen.append(len(probes._TABLES))
        assert held() == (probes._held["tables"], probes._held["harvests"])
        assert probes._held["tables"] <= 400
    assert keys_seen != sorted(keys_seen)  # the table memo emptied on the way


def test_a_table_pushed_out_of_its_keys_does_not_empty_a_memo_it_fits(monkeypatch):
    """A fifth table of the same keys replaces the oldest: the bound is checked on what is
    kept after that, so a memo holding exactly its bound is not emptied by it, and the
    harvest made from the table pushed out goes with it."""
    from harness.checker import probes

    def state(i: int) -> dict:
        return {"users": {f"u{j}": {"name": f"n{i}-{j}"} for j in range(10)}}

    monkeypatch.setattr(probes, "_TABLES", {})
    monkeypatch.setattr(probes, "_HARVESTS", {})
    monkeypatch.setattr(probes, "_held", {"tables": 0, "harvests": 0, "dropped": 0})
    probes.harvest(state(0))
    one = probes._held["tables"]  # 10 records, 10 keys, 10 strings
    assert one == 30
    monkeypatch.setattr(probes, "_TABLE_ITEMS", 4 * one)
    states = [state(i) for i in range(1, 6)]
    for s in states:
        probes.harvest(s)
    assert probes._held["tables"] == 4 * one  # not emptied: four tables kept, two let go
    assert probes._held["dropped"] == 2
    assert len(probes._TABLES[tuple(f"u{j}" for j in range(10))]) == 4
    assert len(probes._HARVESTS) == 4  # those of the four states whose tables are kept
    assert probes.harvest(states[-1]) is probes.harvest(states[-1])


def test_a_harvest_whose_table_was_let_go_meanwhile_is_not_kept(monkeypatch):
    """Two tables of one state with the same keys, one kept a set of keys: finding the
    second lets the first's partial go, so the state's harvest is right but not kept (an
    entry would pin a partial no count includes)."""
    from harness.checker import probes

    monkeypatch.setattr(probes, "_TABLES", {})
    monkeypatch.setattr(probes, "_HARVESTS", {})
    monkeypatch.setattr(probes, "_held", {"tables": 0, "harvests": 0, "dropped": 0})
    monkeypatch.setattr(probes, "_TABLES_PER_KEYS", 1)
    state = {t: {f"k{j}": {"v": f"{t}{j}"} for j in range(3)} for t in ("a", "b")}
    found = probes.harvest(state)
    assert probes._held["dropped"] == 1  # the second table let the first one's go
    assert not probes._HARVESTS and probes._held["harvests"] == 0
    assert found == probes._harvested(state, None)
    single = {"a": state["a"]}
    assert probes.harvest(single) is probes.harvest(single)  # one table: kept as before

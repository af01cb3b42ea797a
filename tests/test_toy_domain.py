"""The toy target: its tools, its contracts and its adapter agree with each other."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
from pathlib import Path

import pytest
import yaml

import toy_domain
from harness.contracts.model import Contract, Surface
from harness.contracts.predicate import compile_predicate
from harness.targets.adapter import Adapter
from harness.targets.equality import bind_pattern, canonical_equal, diff, parse_pattern
from harness.targets.toy import ToyAdapter
from toy_domain import TOOLS
from toy_domain.storage import Storage, etag_of, presign_download
from toy_domain.vouchers import Vouchers

ADAPTER = ToyAdapter()
VOLATILE = [parse_pattern(p) for p in ADAPTER.volatile_paths()]
CONTRACT_FILES = sorted(ADAPTER.contracts_dir().glob("*.yaml"))
# Python annotation (as written in the tool) -> contract signature type.
ANNOTATION_TYPES = {
    str: "str",
    int: "int",
    bool: "bool",
    list[str]: "list",
    int | None: "int|None",
    str | None: "str|None",
}


def load_contract(tool: str) -> Contract:
    path = ADAPTER.contracts_dir() / f"{tool}.yaml"
    return Contract.model_validate(yaml.safe_load(path.read_text()))


def source_lines(relative: str) -> list[str]:
    return (ADAPTER.source_root() / relative).read_text().splitlines()


def cited(contract: Contract) -> list[tuple[str, object]]:
    """(where, clause-or-signal) for everything in a contract that may carry provenance."""
    items: list[tuple[str, object]] = [
        (clause.id, clause)
        for field in (
            "preconditions",
            "effects",
            "frame",
            "arguments",
            "invariants",
            "observations",
        )
        for clause in getattr(contract, field)
    ]
    items.append(("success", contract.success))
    if contract.reset is not None:
        items.append(("reset", contract.reset))
    return items


def invoke_ok(env, tool: str, **args):
    outcome = ADAPTER.invoke(env, tool, args)
    assert outcome.success, (tool, args, outcome)
    return outcome.result


def unchanged(before, after) -> bool:
    return canonical_equal(before, after, masks=VOLATILE)


# --- contracts -------------------------------------------------------------------------


def test_every_tool_has_a_contract_file_and_vice_versa():
    assert {path.stem for path in CONTRACT_FILES} == set(TOOLS)
    assert len(TOOLS) == 24


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_contract_loads_and_names_its_tool(tool):
    contract = load_contract(tool)
    module, function = TOOLS[tool]
    assert contract.tool == tool
    assert contract.target == ADAPTER.name
    assert contract.source.file == module.replace(".", "/") + ".py"
    assert contract.source.function == function
    lines, start = inspect.getsourcelines(ADAPTER.tool_function(tool))
    assert (contract.source.start_line, contract.source.end_line) == (
        start,
        start + len(lines) - 1,
    )


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_quote_is_verbatim_on_its_cited_line(tool):
    contract = load_contract(tool)
    for where, item in cited(contract):
        provenance = item.provenance
        if provenance is None:
            assert item.inferred, f"{tool} {where}: no provenance and not inferred"
            continue
        lines = source_lines(provenance.file)
        assert 1 <= provenance.line <= len(lines), f"{tool} {where}: line out of range"
        line = lines[provenance.line - 1]
        assert provenance.quote in line, f"{tool} {where}: {provenance.quote!r} not in {line!r}"
        if provenance.surface == Surface.TOOL_RETURN:
            assert line.strip().startswith(("return", "raise")), f"{tool} {where}: {line!r}"


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_docstring_quotes_lie_in_the_tools_docstring(tool):
    contract = load_contract(tool)
    function = ADAPTER.tool_function(tool)
    _, start = inspect.getsourcelines(function)
    tree = ast.parse(inspect.getsource(function))
    docstring = tree.body[0].body[0]
    first, last = start + docstring.lineno - 1, start + docstring.end_lineno - 1
    for where, item in cited(contract):
        if item.provenance is not None and item.provenance.surface == Surface.DOCSTRING:
            assert item.provenance.file == contract.source.file, f"{tool} {where}"
            assert first <= item.provenance.line <= last, f"{tool} {where}: not in docstring"


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_signature_matches_the_tool(tool):
    contract = load_contract(tool)
    parameters = list(inspect.signature(ADAPTER.tool_function(tool)).parameters.values())
    service, agent_parameters = parameters[0], parameters[1:]
    assert ADAPTER.injected_parameters(tool) == frozenset({service.name})
    assert [p.name for p in agent_parameters] == list(contract.signature)
    for parameter in agent_parameters:
        spec = contract.signature[parameter.name]
        assert ANNOTATION_TYPES[parameter.annotation] == spec.type, parameter.name
        has_default = parameter.default is not inspect.Parameter.empty
        assert spec.optional == has_default, parameter.name
        if has_default:
            assert spec.default == parameter.default, parameter.name


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_writers_declare_their_arguments_and_readers_none(tool):
    contract = load_contract(tool)
    # the voucher service refuses by returning {"error": ...}: no error type to name
    refuses_by_return = TOOLS[tool][0] == "toy_domain.vouchers"
    expected_type = None if refuses_by_return else "ValueError"
    assert contract.on_precondition_violation.error_type == expected_type
    assert (contract.success.signal == "result") is refuses_by_return
    if tool in ("get_balance", "get_object"):
        assert not any(spec.effective for spec in contract.signature.values())
        assert all(frame.writes == [] for frame in contract.frame)
    else:
        assert contract.success.biconditional
        assert contract.effects and contract.frame
    if TOOLS[tool][0] == "toy_domain.bank":
        assert contract.volatile == ["bank.last_activity"]


def test_shared_invariants_are_stated_identically():
    seen: dict[str, str] = {}
    counts: dict[str, int] = {}
    for tool in TOOLS:
        for clause in load_contract(tool).invariants:
            assert seen.setdefault(clause.id, clause.predicate) == clause.predicate, clause.id
            counts[clause.id] = counts.get(clause.id, 0) + 1
    assert counts == {
        "inv.no_negative_balance": 3,
        "inv.reserved_matches_reservations": 2,
        "inv.reserved_within_stock": 3,
        "inv.meeting_slots_booked": 2,
        "inv.booked_slots_owned": 2,
        "inv.booked_sorted_unique": 2,
    }


# --- adapter and tools ------------------------------------------------------------------


def test_adapter_satisfies_the_protocol():
    assert isinstance(ADAPTER, Adapter)
    assert ADAPTER.version() == toy_domain.__version__ == "1.2.0"
    assert ADAPTER.tool_names() == sorted(TOOLS)
    assert (ADAPTER.source_root() / "toy_domain" / "bank.py").is_file()
    assert ADAPTER.contracts_dir() == ADAPTER.source_root() / "toy_domain" / "contracts"
    assert ADAPTER.volatile_paths() == ["bank.last_activity"]


def test_snapshot_is_json_and_stable_across_fresh_environments():
    first, second = ADAPTER.snapshot(ADAPTER.fresh()), ADAPTER.snapshot(ADAPTER.fresh())
    assert json.loads(json.dumps(first)) == first
    assert unchanged(first, second)
    assert set(first) == {"bank", "inventory", "calendar", "storage", "vouchers"}
    assert first["storage"]["now"] == 1000 and first["storage"]["issued"] == {}
    assert first["bank"]["accounts"]["acc-3"] == {
        "owner": "carol",
        "balance": 75,
        "frozen": True,
        "freeze_reason": "fraud review",
    }


def test_fresh_environments_share_no_mutable_state():
    env, other = ADAPTER.fresh(), ADAPTER.fresh()
    invoke_ok(env, "deposit", account_id="acc-1", amount=5)
    invoke_ok(env, "book_meeting", room="cosmos", slot=1, title="T", attendees=["a"])
    invoke_ok(env, "reserve_item", sku="sku-sample", quantity=1, customer="x")
    assert unchanged(ADAPTER.snapshot(other), ADAPTER.snapshot(ADAPTER.fresh()))


def test_transfer_moves_money_and_records_it():
    env = ADAPTER.fresh()
    result = invoke_ok(
        env, "transfer", from_account="acc-1", to_account="acc-2", amount=200, memo="rent"
    )
    bank = ADAPTER.snapshot(env)["bank"]
    assert result == {"id": "t-2", "from": "acc-1", "to": "acc-2", "amount": 200, "memo": "rent"}
    assert bank["transfers"][-1] == result
    assert [bank["accounts"][a]["balance"] for a in ("acc-1", "acc-2")] == [300, 320]
    assert bank["next_transfer"] == 3
    assert isinstance(bank["last_activity"], float) and bank["last_activity"] > 0


def test_open_account_uses_the_counter():
    env = ADAPTER.fresh()
    assert invoke_ok(env, "open_account", owner="dana") == {"account_id": "acc-6", "balance": 0}
    assert invoke_ok(env, "open_account", owner="eve", initial_deposit=9)["account_id"] == "acc-7"
    assert ADAPTER.snapshot(env)["bank"]["accounts"]["acc-7"]["balance"] == 9


def test_freeze_and_unfreeze_are_a_verb_pair():
    env = ADAPTER.fresh()
    before = ADAPTER.snapshot(env)
    invoke_ok(env, "freeze_account", account_id="acc-1", reason="audit")
    frozen = ADAPTER.snapshot(env)["bank"]["accounts"]["acc-1"]
    assert (frozen["frozen"], frozen["freeze_reason"]) == (True, "audit")
    invoke_ok(env, "unfreeze_account", account_id="acc-1")
    assert unchanged(before, ADAPTER.snapshot(env))


def test_reserve_and_release_keep_reserved_in_step_with_reservations():
    env = ADAPTER.fresh()
    result = invoke_ok(env, "reserve_item", sku="sku-pear", quantity=4, customer="frank")
    assert result == {
        "reservation_id": "res-3",
        "sku": "sku-pear",
        "quantity": 4,
        "customer": "frank",
    }
    inventory = ADAPTER.snapshot(env)["inventory"]
    assert (
        inventory["items"]["sku-pear"]["reserved"] == 6 == inventory["items"]["sku-pear"]["stock"]
    )
    invoke_ok(env, "release_reservation", reservation_id="res-2")
    inventory = ADAPTER.snapshot(env)["inventory"]
    assert "res-2" not in inventory["reservations"]
    assert inventory["items"]["sku-pear"]["reserved"] == 4


def test_update_item_treats_zero_as_a_value_and_none_as_keep():
    env = ADAPTER.fresh()
    assert invoke_ok(env, "update_item", sku="sku-apple", price=0)["price"] == 0
    item = ADAPTER.snapshot(env)["inventory"]["items"]["sku-apple"]
    assert (item["price"], item["min_stock"]) == (0, 10)
    invoke_ok(env, "update_item", sku="sku-apple", min_stock=0)
    item = ADAPTER.snapshot(env)["inventory"]["items"]["sku-apple"]
    assert (item["price"], item["min_stock"]) == (0, 0)


def test_lock_blocks_restock_and_other_customers():
    env = ADAPTER.fresh()
    assert invoke_ok(env, "lock_inventory", holder="dave") == "Inventory locked by dave."
    before = ADAPTER.snapshot(env)
    assert not ADAPTER.invoke(env, "restock", {"sku": "sku-apple", "quantity": 5}).success
    refused = ADAPTER.invoke(
        env, "reserve_item", {"sku": "sku-apple", "quantity": 1, "customer": "x"}
    )
    assert refused.error_message == "Inventory is locked by dave"
    assert unchanged(before, ADAPTER.snapshot(env))
    invoke_ok(env, "reserve_item", sku="sku-apple", quantity=1, customer="dave")
    invoke_ok(env, "unlock_inventory", holder="dave")
    assert invoke_ok(env, "restock", sku="sku-apple", quantity=5)["stock"] == 45


def test_book_and_cancel_keep_booked_sorted_and_owned():
    env = ADAPTER.fresh()
    result = invoke_ok(
        env, "book_meeting", room="aurora", slot=0, title="Kickoff", attendees=["ann", "ben"]
    )
    assert result["meeting_id"] == "m-3"
    assert ADAPTER.snapshot(env)["calendar"]["rooms"]["aurora"]["booked"] == [0, 2, 5]
    invoke_ok(env, "cancel_meeting", meeting_id="m-1")
    calendar = ADAPTER.snapshot(env)["calendar"]
    assert calendar["rooms"]["aurora"]["booked"] == [0, 5]
    assert sorted(calendar["meetings"]) == ["m-2", "m-3"]
    renamed = invoke_ok(env, "rename_meeting", meeting_id="m-3", title="Launch")
    assert renamed["title"] == ADAPTER.snapshot(env)["calendar"]["meetings"]["m-3"]["title"]


LOCK_OPS = [("lock_inventory", {"holder": "ops"})]
# Issuing is deterministic: the URL a fresh storage presigns for readme.txt with ttl 300.
PRESIGN = [("presign_download", {"key": "readme.txt", "ttl": 300})]
URL = presign_download(Storage(), "readme.txt", 300)["url"]
README_ETAG = etag_of(1, "hello")

# One legal call per tool: (setup calls, args).
VOUCHER_TOKEN = Vouchers().vouchers["V-1"].token  # the seed's live voucher
REDEEMED_TOKEN = Vouchers().vouchers["V-0"].token  # the seed's redeemed voucher
HAPPY: dict[str, tuple[list, dict]] = {
    "open_account": ([], {"owner": "dana", "initial_deposit": 25}),
    "deposit": ([], {"account_id": "acc-2", "amount": 40}),
    "transfer": (
        [],
        {"from_account": "acc-1", "to_account": "acc-4", "amount": 50, "memo": "rent"},
    ),
    "freeze_account": ([], {"account_id": "acc-2", "reason": "lost card"}),
    "unfreeze_account": ([], {"account_id": "acc-5"}),
    "get_balance": ([], {"account_id": "acc-1"}),
    "reserve_item": ([], {"sku": "sku-apple", "quantity": 2, "customer": "frank"}),
    "release_reservation": ([], {"reservation_id": "res-1"}),
    "restock": ([], {"sku": "sku-pear", "quantity": 10}),
    "update_item": ([], {"sku": "sku-apple", "price": 0}),
    "lock_inventory": ([], {"holder": "ops"}),
    "unlock_inventory": (LOCK_OPS, {"holder": "ops"}),
    "book_meeting": (
        [],
        {"room": "aurora", "slot": 0, "title": "Design review", "attendees": ["alice"]},
    ),
    "cancel_meeting": ([], {"meeting_id": "m-2"}),
    "rename_meeting": ([], {"meeting_id": "m-1", "title": "Sync"}),
    "presign_download": ([], {"key": "reports/q3 plan.txt", "ttl": 300}),
    "download": (PRESIGN, {"url": URL}),
    "advance_clock": ([], {"seconds": 30}),
    "get_object": ([], {"key": "readme.txt"}),
    "update_object": ([], {"key": "readme.txt", "body": "v2", "if_match": README_ETAG}),
    "export_bucket": ([], {}),
    "issue_voucher": ([], {"amount": 50, "ttl": 300}),
    "redeem_voucher": ([], {"token": VOUCHER_TOKEN}),
    "advance_voucher_clock": ([], {"seconds": 30}),
}

# One call per precondition that falsifies it alone: (tool, clause id, setup calls, args).
_T = {"from_account": "acc-1", "to_account": "acc-2", "amount": 10}
_BOOK = {"room": "aurora", "slot": 0, "title": "T", "attendees": []}
VIOLATIONS: list[tuple[str, str, list, dict]] = [
    ("open_account", "pre.owner_given", [], {"owner": ""}),
    ("open_account", "pre.deposit_not_negative", [], {"owner": "d", "initial_deposit": -5}),
    ("deposit", "pre.account_exists", [], {"account_id": "acc-9", "amount": 5}),
    ("deposit", "pre.not_frozen", [], {"account_id": "acc-3", "amount": 5}),
    ("deposit", "pre.positive_amount", [], {"account_id": "acc-1", "amount": 0}),
    ("transfer", "pre.source_exists", [], {**_T, "from_account": "acc-9"}),
    ("transfer", "pre.destination_exists", [], {**_T, "to_account": "acc-9"}),
    ("transfer", "pre.distinct_accounts", [], {**_T, "to_account": "acc-1"}),
    ("transfer", "pre.source_not_frozen", [], {**_T, "from_account": "acc-3"}),
    ("transfer", "pre.destination_not_frozen", [], {**_T, "to_account": "acc-3"}),
    ("transfer", "pre.positive_amount", [], {**_T, "amount": 0}),
    ("transfer", "pre.sufficient_funds", [], {**_T, "amount": 501}),
    ("freeze_account", "pre.account_exists", [], {"account_id": "acc-9", "reason": "r"}),
    ("freeze_account", "pre.not_frozen", [], {"account_id": "acc-3", "reason": "r"}),
    ("freeze_account", "pre.reason_given", [], {"account_id": "acc-1", "reason": ""}),
    ("unfreeze_account", "pre.account_exists", [], {"account_id": "acc-9"}),
    ("unfreeze_account", "pre.frozen", [], {"account_id": "acc-1"}),
    ("get_balance", "pre.account_exists", [], {"account_id": "acc-9"}),
    ("reserve_item", "pre.item_exists", [], {"sku": "sku-kiwi", "quantity": 1, "customer": "f"}),
    (
        "reserve_item",
        "pre.positive_quantity",
        [],
        {"sku": "sku-pear", "quantity": 0, "customer": "f"},
    ),
    (
        "reserve_item",
        "pre.quantity_available",
        [],
        {"sku": "sku-pear", "quantity": 5, "customer": "f"},
    ),
    ("reserve_item", "pre.customer_given", [], {"sku": "sku-pear", "quantity": 1, "customer": ""}),
    (
        "reserve_item",
        "pre.not_locked_by_other",
        LOCK_OPS,
        {"sku": "sku-pear", "quantity": 1, "customer": "f"},
    ),
    ("release_reservation", "pre.reservation_exists", [], {"reservation_id": "res-9"}),
    ("restock", "pre.item_exists", [], {"sku": "sku-kiwi", "quantity": 1}),
    ("restock", "pre.positive_quantity", [], {"sku": "sku-pear", "quantity": -3}),
    ("restock", "pre.not_locked", LOCK_OPS, {"sku": "sku-pear", "quantity": 1}),
    ("update_item", "pre.item_exists", [], {"sku": "sku-kiwi", "price": 1}),
    ("update_item", "pre.price_not_negative", [], {"sku": "sku-pear", "price": -1}),
    ("update_item", "pre.min_stock_not_negative", [], {"sku": "sku-pear", "min_stock": -2}),
    ("lock_inventory", "pre.not_locked", LOCK_OPS, {"holder": "qa"}),
    ("lock_inventory", "pre.holder_given", [], {"holder": ""}),
    ("unlock_inventory", "pre.locked_by_holder", [], {"holder": "ops"}),
    ("book_meeting", "pre.room_exists", [], {**_BOOK, "room": "atrium"}),
    ("book_meeting", "pre.slot_in_range", [], {**_BOOK, "slot": 8}),
    ("book_meeting", "pre.slot_free", [], {**_BOOK, "slot": 2}),
    ("book_meeting", "pre.title_given", [], {**_BOOK, "title": ""}),
    (
        "book_meeting",
        "pre.attendees_fit",
        [],
        {**_BOOK, "room": "borealis", "attendees": ["a"] * 3},
    ),
    ("cancel_meeting", "pre.meeting_exists", [], {"meeting_id": "m-9"}),
    ("rename_meeting", "pre.meeting_exists", [], {"meeting_id": "m-9", "title": "T"}),
    ("rename_meeting", "pre.title_given", [], {"meeting_id": "m-1", "title": ""}),
    ("presign_download", "pre.object_exists", [], {"key": "missing.txt", "ttl": 60}),
    ("presign_download", "pre.ttl_in_range", [], {"key": "readme.txt", "ttl": 3601}),
    ("download", "pre.url_issued", [], {"url": URL}),
    ("advance_clock", "pre.positive", [], {"seconds": 0}),
    ("get_object", "pre.object_exists", [], {"key": "missing.txt"}),
    (
        "update_object",
        "pre.object_exists",
        [],
        {"key": "missing.txt", "body": "b", "if_match": README_ETAG},
    ),
    (
        "update_object",
        "pre.etag_current",
        [],
        {"key": "readme.txt", "body": "b", "if_match": etag_of(2, "hello")},
    ),
    ("export_bucket", "pre.not_rate_limited", [("export_bucket", {})], {}),
    ("issue_voucher", "pre.amount_in_range", [], {"amount": 0, "ttl": 60}),
    ("issue_voucher", "pre.ttl_in_range", [], {"amount": 5, "ttl": 3601}),
    ("redeem_voucher", "pre.token_issued", [], {"token": VOUCHER_TOKEN[:-1] + "0"}),
    ("redeem_voucher", "pre.not_redeemed", [], {"token": REDEEMED_TOKEN}),
    ("advance_voucher_clock", "pre.positive", [], {"seconds": 0}),
]


def prepared(setup: list):
    env = ADAPTER.fresh()
    for tool, args in setup:
        invoke_ok(env, tool, **args)
    return env


def holds(text: str, **bindings) -> bool:
    return compile_predicate(text).holds(bindings)


def with_defaults(contract: Contract, args: dict) -> dict:
    """The args a predicate sees: omitted optional arguments take their declared default."""
    defaults = {name: spec.default for name, spec in contract.signature.items() if spec.optional}
    return {**defaults, **args}


def test_every_precondition_has_a_violating_call():
    listed = {(tool, clause) for tool, clause, _, _ in VIOLATIONS}
    declared = {(t, c.id) for t in TOOLS for c in load_contract(t).preconditions}
    assert listed == declared
    assert set(HAPPY) == set(TOOLS)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_legal_call_meets_every_effect_and_invariant(tool):
    contract = load_contract(tool)
    setup, called = HAPPY[tool]
    args = with_defaults(contract, called)
    env = prepared(setup)
    pre = ADAPTER.snapshot(env)
    assert all(holds(c.predicate, pre=pre, args=args) for c in contract.preconditions)
    result = invoke_ok(env, tool, **called)
    post = ADAPTER.snapshot(env)
    for clause in contract.effects + contract.invariants:
        assert holds(clause.predicate, pre=pre, post=post, args=args, result=result), clause.id
    for frame in contract.frame:
        masks = [bind_pattern(w, args) for w in frame.writes] + VOLATILE
        scope = [parse_pattern(s) for s in frame.scope]
        changed = [d.dotted() for d in diff(pre, post, masks=masks) if path_in(d.path, scope)]
        assert changed == [], frame.id


def path_in(path: tuple, scopes: list[tuple[str, ...]]) -> bool:
    return any(tuple(str(p) for p in path[: len(s)]) == s for s in scopes)


@pytest.mark.parametrize(
    ("tool", "clause_id", "setup", "args"),
    VIOLATIONS,
    ids=[f"{t}:{c}" for t, c, _, _ in VIOLATIONS],
)
def test_a_violated_precondition_raises_value_error_and_changes_nothing(
    tool, clause_id, setup, args
):
    env = prepared(setup)
    pre = ADAPTER.snapshot(env)
    contract = load_contract(tool)
    seen = with_defaults(contract, args)
    truth = {c.id: holds(c.predicate, pre=pre, args=seen) for c in contract.preconditions}
    assert [c for c, true in truth.items() if not true] == [clause_id]
    outcome = ADAPTER.invoke(env, tool, args)
    if TOOLS[tool][0] == "toy_domain.vouchers":  # refuses by returning {"error": ...}
        assert outcome.success and set(outcome.result) == {"error"}, outcome
    else:
        assert (outcome.success, outcome.error_type) == (False, "ValueError")
    assert diff(pre, ADAPTER.snapshot(env)) == []


def test_reset_after_writes_restores_the_fresh_snapshot():
    env = ADAPTER.fresh()
    invoke_ok(env, "open_account", owner="dana", initial_deposit=5)
    invoke_ok(env, "transfer", from_account="acc-1", to_account="acc-2", amount=7)
    invoke_ok(env, "freeze_account", account_id="acc-2", reason="audit")
    invoke_ok(env, "reserve_item", sku="sku-apple", quantity=2, customer="frank")
    invoke_ok(env, "release_reservation", reservation_id="res-1")
    invoke_ok(env, "update_item", sku="sku-sample", price=4, min_stock=1)
    invoke_ok(env, "restock", sku="sku-pear", quantity=3)
    invoke_ok(env, "lock_inventory", holder="ops")
    invoke_ok(env, "book_meeting", room="cosmos", slot=3, title="T", attendees=[])
    invoke_ok(env, "cancel_meeting", meeting_id="m-2")
    invoke_ok(env, "rename_meeting", meeting_id="m-1", title="Daily")
    fresh = ADAPTER.snapshot(ADAPTER.fresh())
    assert not unchanged(fresh, ADAPTER.snapshot(env))
    ADAPTER.reset(env)
    assert diff(fresh, ADAPTER.snapshot(env), masks=VOLATILE) == []


@dataclasses.dataclass
class _Probe:
    pair: tuple[int, int]


def test_invoke_resolves_the_function_at_call_time(monkeypatch):
    env = ADAPTER.fresh()
    calls = []

    def replacement(bank, account_id: str) -> _Probe:
        calls.append((bank is env.bank, account_id))
        return _Probe(pair=(1, 2))

    monkeypatch.setattr(importlib.import_module("toy_domain.bank"), "get_balance", replacement)
    outcome = ADAPTER.invoke(env, "get_balance", {"account_id": "acc-1"})
    assert calls == [(True, "acc-1")]
    assert outcome.success and outcome.result == {"pair": [1, 2]}
    assert ADAPTER.tool_function("get_balance") is replacement


def test_tool_errors_become_outcomes_and_harness_errors_raise():
    env = ADAPTER.fresh()
    outcome = ADAPTER.invoke(env, "deposit", {"account_id": "acc-3", "amount": 5})
    assert (outcome.success, outcome.error_type) == (False, "ValueError")
    assert outcome.error_message == "Account acc-3 is frozen"
    with pytest.raises(KeyError, match="unknown tool 'withdraw'"):
        ADAPTER.invoke(env, "withdraw", {})
    with pytest.raises(ValueError, match="injected by the adapter"):
        ADAPTER.invoke(env, "get_balance", {"bank": None, "account_id": "acc-1"})


def test_source_root_makes_provenance_paths_relative():
    root = ADAPTER.source_root()
    for module, _ in TOOLS.values():
        relative = Path(module.replace(".", "/") + ".py")
        assert (root / relative).resolve() == Path(
            importlib.import_module(module).__file__
        ).resolve()

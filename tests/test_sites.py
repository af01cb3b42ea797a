"""harness.mutation.sites: the functions a tool's call reaches, their context, state writes,
written and restored fields.
"""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from pathlib import Path
from typing import cast

from mutation_support import ADAPTER, ROOT, TARGET, context

import harness.mutation.sites as sites_module
from harness.mutation.model import sha256_text
from harness.mutation.registry import get_operator
from harness.mutation.sites import (
    function_source,
    reset_sites,
    restored_fields,
    site_context,
    state_writes,
    tool_sites,
    written_fields,
)
from harness.targets.adapter import Adapter


def test_transfer_reaches_its_helpers() -> None:
    sites = tool_sites(ADAPTER, "transfer")
    names = [s.qualname for s in sites]
    assert names[0] == "transfer"
    assert {"Bank._debit", "Bank._credit", "Bank._record_transfer", "Bank._touch"} <= set(names)
    assert "Transfer.to_json" in names  # `record` is typed by _record_transfer's return
    assert "Account.to_json" not in names  # never called by transfer
    for site in sites:
        assert site.file == "toy_domain/bank.py"
        assert site.source_hash == sha256_text(function_source(site, ROOT))
    text = function_source(sites[names.index("Bank._debit")], ROOT)
    assert text.startswith("def _debit(self")  # dedented method text


FIXTURE = """
class Store:
    def __init__(self) -> None:
        self.items: dict[str, bool] = {}

    def reserve(self, key: str) -> None:
        self.items[key] = True


def reserve(store: Store, key: str) -> str:
    store.reserve(key)
    return key


def untyped(thing, key):
    thing.reserve(key)


def tool(store: Store, key: str) -> str:
    untyped(store, key)
    return reserve(store, key)
"""


class _FixtureAdapter:
    def __init__(self, module: object, root: Path):
        self.module, self.root = module, root

    def tool_function(self, tool: str):
        return getattr(self.module, tool)

    def source_root(self) -> Path:
        return self.root


def test_same_name_at_two_places_gives_two_sites(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "dup_fixture_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "store.py").write_text(FIXTURE)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module("dup_fixture_pkg.store")
        sites = tool_sites(_FixtureAdapter(module, tmp_path), "tool")  # type: ignore[arg-type]
    finally:
        for name in [n for n in sys.modules if n.startswith("dup_fixture_pkg")]:
            del sys.modules[name]
    by_name = {s.qualname: s for s in sites}
    assert set(by_name) == {"tool", "untyped", "reserve", "Store.reserve"}
    assert by_name["reserve"].start_line != by_name["Store.reserve"].start_line
    assert len({(s.file, s.qualname, s.start_line) for s in sites}) == len(sites)
    assert all(s.file == "dup_fixture_pkg/store.py" for s in sites)


def test_reset_path_is_the_environment_reset_and_each_service_reset() -> None:
    names = [s.qualname for s in reset_sites(ADAPTER)]
    assert names[0] == "ToyEnvironment.reset"
    assert {"Bank.reset", "Inventory.reset", "Calendar.reset"} <= set(names)


def test_site_context_reads_contract_and_module() -> None:
    contract = TARGET.contracts["transfer"]
    sites = {s.qualname: s for s in tool_sites(ADAPTER, "transfer")}
    own = site_context(ADAPTER, contract, sites["transfer"], "transfer")
    helper = site_context(ADAPTER, contract, sites["Bank._debit"], "transfer")
    assert own.is_tool_function and not helper.is_tool_function
    assert own.injected == {"bank"}
    assert own.effective_arguments == {"from_account", "to_account", "amount", "memo"}
    assert own.invariant_fields == {"bank", "accounts"}
    assert {"_debit", "_credit", "_record_transfer"} <= own.writer_names
    assert "to_json" not in own.writer_names and "get_balance" not in own.writer_names
    # `_touch` only stamps `last_activity`, a volatile path: not a writer
    assert own.volatile_fields == {"last_activity"}
    assert "_touch" not in own.writer_names
    bank_reset = next(s for s in reset_sites(ADAPTER) if s.qualname == "Bank.reset")
    assert site_context(ADAPTER, contract, bank_reset, "transfer").is_reset
    assert not own.is_reset


def test_state_writes_through_aliases_helpers_and_in_place_calls() -> None:
    source = textwrap.dedent(
        """\
        def f(svc, key, value):
            local = []
            local.append(value)
            alias = svc.items[key]
            alias.count += 1
            svc.helper(key)
            bisect.insort(svc.slots, value)
            record = svc.log.pop()
            return record
        """
    )
    fn = ast.parse(source).body[0]
    writes = state_writes(fn, {"helper"})  # type: ignore[arg-type]
    assert [(w.statement.lineno, w.kind) for w in writes] == [
        (5, "assign"),
        (6, "call"),
        (7, "call"),
        (8, "value"),
    ]


NESTED = textwrap.dedent(
    '''\
    def apply_all(svc, items: list, limit: int = 3):
        """Apply every item."""
        # a comment that must survive
        for item in items:
            try:
                with svc.lock:
                    if item not in svc.known:
                        raise KeyError(item)
                    elif item == limit:
                        raise ValueError("at the limit")
                    svc.count += 1
                    svc.seen.append(item)
            finally:
                svc.done = True
        return svc.count
    '''
)


def test_guards_and_writes_found_at_any_depth() -> None:
    ctx = context(effective_arguments=frozenset({"items"}), invariant_fields=frozenset({"seen"}))
    precond, phantom = get_operator("M-PRECOND"), get_operator("M-PHANTOM")
    assert precond.occurrences(NESTED, ctx) == 4  # two guards (the elif too), two variants
    assert get_operator("M-PARTIAL").occurrences(NESTED, ctx) == 3
    assert get_operator("M-INVAR").occurrences(NESTED, ctx) == 1
    assert phantom.occurrences(NESTED, ctx) == 1
    for op in (precond, get_operator("M-PARTIAL"), phantom):
        for occurrence in range(op.occurrences(NESTED, ctx)):
            mutated = op.mutate(NESTED, ctx, occurrence)
            compile(mutated, "<mutant>", "exec")
            assert mutated != NESTED
            assert "# a comment that must survive" in mutated
            assert mutated.startswith('def apply_all(svc, items: list, limit: int = 3):\n    """')
    negated = precond.mutate(NESTED, ctx, 3)  # the elif, negated in place
    assert "elif not (item == limit):" in negated
    phantom_text = phantom.mutate(NESTED, ctx, 0)
    assert "svc.count += 1" not in phantom_text and "svc.done = True" not in phantom_text
    assert "return svc.count" in phantom_text


RESET_FIXTURE = """
import time


class Entry:
    def __init__(self) -> None:
        self.count: int = 0


class Store:
    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.log: list[str] = []
        self.stamp: float = 0.0

    def reset(self) -> None:
        self._reset_entries()
        self.log.clear()
        self.stamp = 0.0

    def _reset_entries(self) -> None:
        self.entries = {}

    def _bump(self, entry: Entry) -> None:
        entry.count += 1

    def _stamp(self) -> None:
        self.stamp = time.time()


def bump(store: Store, key: str) -> None:
    store._bump(store.entries[key])
    store._stamp()


def note(store: Store, text: str) -> None:
    for line in store.log:
        line.strip()
    store.log.append(text)
    store._stamp()
"""


def test_written_and_restored_fields_on_a_fixture(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "reset_fixture_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "store.py").write_text(RESET_FIXTURE)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module("reset_fixture_pkg.store")

        class ResetAdapter(_FixtureAdapter):
            def fresh(self): ...

        ResetAdapter.fresh.__annotations__["return"] = module.Store
        adapter = cast(Adapter, ResetAdapter(module, tmp_path))
        # `entry.count` through a parameter typed Entry: `entries: dict[str, Entry]` holds it
        assert written_fields(adapter, "bump", {"stamp"}) == {"count", "entries"}
        assert written_fields(adapter, "bump") == {"count", "entries", "stamp"}
        assert written_fields(adapter, "note", {"stamp"}) == {"log"}
        reset = next(s for s in reset_sites(adapter) if s.qualname == "Store.reset")
        fn = sites_module.parse_function(function_source(reset, tmp_path))
        restored = [restored_fields(adapter, reset, [stmt]) for stmt in fn.body]
    finally:
        for name in [n for n in sys.modules if n.startswith("reset_fixture_pkg")]:
            del sys.modules[name]
    # a helper call restores what the helper writes; a mutating call its receiver
    assert restored == [{"entries"}, {"log"}, {"stamp"}]


def test_restored_and_written_fields_on_the_toy_domain() -> None:
    env_reset = next(s for s in reset_sites(ADAPTER) if s.qualname == "ToyEnvironment.reset")
    fn = ast.parse(function_source(env_reset, ROOT)).body[0]
    bank_step = fn.body[1]  # type: ignore[attr-defined]  # self.bank.reset(), after the docstring
    assert ast.unparse(bank_step) == "self.bank.reset()"
    assert restored_fields(ADAPTER, env_reset, [bank_step]) == {
        "accounts",
        "transfers",
        "next_account",
        "next_transfer",
        "last_activity",
    }
    volatile = frozenset({"last_activity"})
    assert {"accounts", "balance"} <= written_fields(ADAPTER, "deposit", volatile)
    assert "last_activity" not in written_fields(ADAPTER, "deposit", volatile)
    assert "last_activity" in written_fields(ADAPTER, "deposit")
    # `account.frozen = True` with `account = bank.accounts[account_id]`
    assert {"frozen", "freeze_reason", "accounts"} <= written_fields(
        ADAPTER, "freeze_account", volatile
    )
    assert written_fields(ADAPTER, "get_balance", volatile) == set()

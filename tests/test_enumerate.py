"""harness.mutation.enumerate: pairs are deterministic, ids follow content, diffs are unified
diffs, and a reset-leak mutant pairs only with the tools that can leave state behind.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from mutation_support import ADAPTER, CLOSED, CONTROLS, ROOT, TARGET, baseline, new_violations

from harness.checker.verdicts import DefectClass
from harness.mutation.enumerate import enumerate_pairs
from harness.mutation.model import Pair
from harness.mutation.sites import (
    changed_statements,
    function_source,
    restored_fields,
    volatile_fields,
    written_fields,
)


def _removed_line(pair: Pair) -> str:
    removed = [
        line[1:].strip()
        for line in pair.mutant.diff.splitlines()
        if line.startswith("-") and not line.startswith("---")
    ]
    assert len(removed) == 1, pair.mutant.diff
    return removed[0]


def _reset_pairs(all_pairs: list[Pair]) -> dict[tuple[str, str], set[str]]:
    """(reset function, removed statement) -> the tools it is paired with."""
    found: dict[tuple[str, str], set[str]] = {}
    for pair in all_pairs:
        if pair.mutant.operator == "M-RESET":
            key = (pair.mutant.site.qualname, _removed_line(pair))
            found.setdefault(key, set()).add(pair.tool)
    return found


BANK_WRITERS = {"open_account", "deposit", "transfer", "freeze_account", "unfreeze_account"}


INVENTORY_TOOLS = {
    "reserve_item",
    "release_reservation",
    "restock",
    "update_item",
    "lock_inventory",
    "unlock_inventory",
}


CALENDAR_TOOLS = {"book_meeting", "cancel_meeting", "rename_meeting"}


VOUCHER_TOOLS = {"issue_voucher", "redeem_voucher", "advance_voucher_clock"}


STORAGE_WRITERS = {
    "presign_download",
    "download",
    "advance_clock",
    "update_object",
    "export_bucket",
}


def test_reset_mutants_pair_only_with_tools_that_write_what_they_restore(all_pairs) -> None:
    reset_pairs = [p for p in all_pairs if p.mutant.operator == "M-RESET"]
    # 37 for the first 15 tools (was 15 mutants x 15 tools = 225), 12 for the storage tools,
    # 8 for the voucher tools
    assert len(reset_pairs) == 57
    for pair in reset_pairs:  # the rule itself, on every pair
        contract = TARGET.contracts[pair.tool]
        volatile = volatile_fields(ADAPTER, contract)
        changed = changed_statements(
            function_source(pair.mutant.site, ROOT), pair.mutant.mutated_source
        )
        assert changed, pair.mutant.diff
        restored = restored_fields(ADAPTER, pair.mutant.site, changed)
        written = written_fields(ADAPTER, pair.tool, volatile)
        assert (restored & written) - volatile, (pair.tool, _removed_line(pair))
    by_step = _reset_pairs(all_pairs)
    assert by_step[("Bank.reset", "self.transfers = seed_transfers()")] == {"transfer"}
    assert by_step[("Bank.reset", "self.accounts = seed_accounts()")] == BANK_WRITERS
    assert by_step[("ToyEnvironment.reset", "self.bank.reset()")] == BANK_WRITERS
    assert by_step[("ToyEnvironment.reset", "self.inventory.reset()")] == INVENTORY_TOOLS
    assert by_step[("ToyEnvironment.reset", "self.calendar.reset()")] == CALENDAR_TOOLS
    assert by_step[("ToyEnvironment.reset", "self.storage.reset()")] == STORAGE_WRITERS
    assert by_step[("Storage.reset", "self.now = SEED_NOW")] == {"advance_clock"}
    assert by_step[("Storage.reset", "self.objects = seed_objects()")] == {
        "download",
        "update_object",
    }
    assert by_step[("Storage.reset", "self.issued = {}")] == {"presign_download"}
    assert by_step[("Storage.reset", "self.retry_after = SEED_RETRY_AFTER")] == {"export_bucket"}
    assert by_step[("ToyEnvironment.reset", "self.vouchers.reset()")] == VOUCHER_TOOLS
    assert by_step[("Vouchers.reset", "self.clock = SEED_CLOCK")] == {"advance_voucher_clock"}
    assert by_step[("Vouchers.reset", "self.vouchers = seed_vouchers()")] == {
        "issue_voucher",
        "redeem_voucher",
    }
    assert by_step[("Vouchers.reset", "self.next_code = SEED_NEXT_CODE")] == {"issue_voucher"}
    assert by_step[("Vouchers.reset", "self.redeemed_total = SEED_REDEEMED_TOTAL")] == {
        "redeem_voucher"
    }
    # `item.reserved += ...` with `item = inventory.items[sku]` writes `items` too
    assert by_step[("Inventory.reset", "self.items = seed_items()")] == {
        "reserve_item",
        "release_reservation",
        "restock",
        "update_item",
    }
    assert by_step[("Calendar.reset", "self.rooms = seed_rooms()")] == {
        "book_meeting",
        "cancel_meeting",
    }
    # `last_activity` is volatile: leaving it behind is masked, so no tool gets that mutant
    assert ("Bank.reset", "self.last_activity = SEED_LAST_ACTIVITY") not in by_step
    assert all(tools for tools in by_step.values())
    assert "get_balance" not in {p.tool for p in reset_pairs}  # writes nothing


UNREVEALED_RESET_PAIRS = {
    # unlock_inventory's only write sets `lock_holder` to None, its seed value, and it only
    # succeeds from a locked state, which the checker reaches with a lock_inventory setup
    # call in the same environment: lock then unlock leaves the inventory as fresh, so a
    # reset that forgets the inventory (or its lock) has nothing left to leak. The static
    # rule does not compare written values with the seed; a checker would need to reset
    # after a refused unlock (leaking the setup's lock) to see these, and the reference
    # checker resets only after the happy call and the sequence.
    ("ToyEnvironment.reset", "self.inventory.reset()", "unlock_inventory"),
    ("Inventory.reset", "self.lock_holder = SEED_LOCK_HOLDER", "unlock_inventory"),
}


def _reset_outcome(pair: Pair) -> tuple[tuple[str, str, str], bool]:
    key = (pair.mutant.site.qualname, _removed_line(pair), pair.tool)
    return key, ("reset", DefectClass.RESET_LEAK) in new_violations(pair)


def test_every_reset_pair_is_revealed_as_a_reset_leak(all_pairs: list[Pair]) -> None:
    reset_pairs = [p for p in all_pairs if p.mutant.operator == "M-RESET"]
    for tool in {p.tool for p in reset_pairs}:
        baseline(tool)  # computed once, inherited by the forked workers
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        outcomes = dict(pool.map(_reset_outcome, reset_pairs))
    assert len(outcomes) == len(reset_pairs)
    missed = {key for key, revealed in outcomes.items() if not revealed}
    assert missed == UNREVEALED_RESET_PAIRS


def test_enumeration_is_deterministic_and_ids_follow_content(all_pairs: list[Pair]) -> None:
    subset = ["transfer", "deposit"]
    first = enumerate_pairs(TARGET, subset, [*CLOSED, *CONTROLS])
    assert enumerate_pairs(TARGET, list(reversed(subset)), [*CLOSED, *CONTROLS]) == first
    # a mutant's id does not depend on which other tools were enumerated with it
    assert first == [p for p in all_pairs if p.tool in subset]
    content: dict[str, tuple[str, str, str, str]] = {}
    for pair in all_pairs:
        m = pair.mutant
        key = (m.site.file, m.site.qualname, m.operator, m.mutated_source)
        assert content.setdefault(m.id, key) == key
    assert len(set(content.values())) == len(content)  # one id per content
    assert len({p.id for p in all_pairs}) == len(all_pairs)
    shared = [p for p in all_pairs if p.mutant.site.qualname == "Bank._credit"]
    tools_per_id: dict[str, set[str]] = {}
    for pair in shared:
        tools_per_id.setdefault(pair.mutant.id, set()).add(pair.tool)
    assert {"deposit", "transfer"} in tools_per_id.values()  # one mutant, two pairs


def test_diff_is_a_unified_diff_of_the_installed_file(all_pairs: list[Pair]) -> None:
    for pair in all_pairs:
        diff = pair.mutant.diff
        assert diff.startswith("--- a/toy_domain/"), diff[:80]
        lines = diff.splitlines()
        assert lines[1].startswith("+++ b/toy_domain/")
        assert any(line[:1] in {"-", "+"} for line in lines[2:])
        assert all(line[:1] in {" ", "-", "+", "@"} for line in lines)

"""Miss causes: a changed path is covered by a frame clause only in its scope and outside its
writes, by a predicate only when it reads the path in the post-state. Mutants of the toy
domain's `deposit`, built to fall on each side, under contract variants that leave one
kind of clause to decide."""

from __future__ import annotations

import textwrap

import pytest
from test_runner import hand_mutant

from harness.contracts.model import Contract
from harness.execution.ledger import MissCause
from harness.execution.liveness import observe
from harness.execution.miss_cause import (
    OUTCOME,
    RESULT,
    Change,
    call_changes,
    clause_patterns,
    covered,
    miss_cause,
)
from harness.mutation.apply import applied
from harness.mutation.model import Mutant
from harness.mutation.sites import tool_sites
from harness.targets.registry import load_target

CORPUS = [{"account_id": "acc-1", "amount": 40}, {"account_id": "acc-2", "amount": 1}]

DEPOSIT = """
def deposit(bank, account_id, amount):
    if account_id not in bank.accounts:
        raise ValueError(f"Account {{account_id}} does not exist")
    if bank.accounts[account_id].frozen:
        raise ValueError(f"Account {{account_id}} is frozen")
    if amount <= 0:
        raise ValueError(f"Amount must be positive, got {{amount}}")
    {credit}
    bank._touch()
    return "ok"
"""
# Each mutant's result is the constant "ok": every one changes the result the same way, so
# the state paths decide.
WRONG_AMOUNT = DEPOSIT.format(credit="bank._credit(account_id, amount + 1)")  # a path in writes
OTHER_ACCOUNT = DEPOSIT.format(  # a path in the frame's scope, outside its writes
    credit='bank._credit(account_id, amount)\n    bank._credit("acc-4", 1)'
)
NEW_TRANSFER = DEPOSIT.format(  # a path no effect or invariant reads
    credit="bank._credit(account_id, amount)\n    bank.next_transfer += 1"
)


@pytest.fixture(scope="module")
def toy():
    return load_target("toy_domain")


def _mutant(target, source: str) -> Mutant:
    adapter = target.adapter
    site = next(s for s in tool_sites(adapter, "deposit") if s.qualname == "deposit")
    text = textwrap.dedent(source).lstrip()
    return hand_mutant(adapter, site, "TEST", text)


def _changes(target, source: str) -> list[Change]:
    original = observe(target.adapter, "deposit", CORPUS)
    with applied(target.adapter, _mutant(target, source)):
        mutated = observe(target.adapter, "deposit", CORPUS)
    return call_changes(original, mutated, CORPUS)


def _frame_only(contract: Contract) -> Contract:
    """No effect, no invariant: only the frame clauses (and `pre`-only preconditions)."""
    return contract.model_copy(update={"effects": [], "invariants": []})


def _predicates_only(contract: Contract) -> Contract:
    return contract.model_copy(update={"frame": []})


def test_a_path_the_frame_clause_lists_in_writes_is_not_covered_by_it(toy):
    changes = _changes(toy, WRONG_AMOUNT)
    paths = {c.path for c in changes if c.marker is None and not c.after_reset}
    assert paths == {
        ("bank", "accounts", "acc-1", "balance"),
        ("bank", "accounts", "acc-2", "balance"),
    }
    contract = _frame_only(toy.contracts["deposit"])
    # scope [bank] covers the balance, but the clause writes it: nothing constrains it
    assert miss_cause(changes, clause_patterns(contract)) is MissCause.NO_CLAUSE
    # the same clause without its writes constrains the path
    frame = contract.frame[0].model_copy(update={"writes": []})
    strict = contract.model_copy(update={"frame": [frame, *contract.frame[1:]]})
    assert miss_cause(changes, clause_patterns(strict)) is MissCause.PROBE_UNREVEALING


def test_a_path_in_scope_outside_the_bound_writes_is_covered_by_the_frame(toy):
    changes = _changes(toy, OTHER_ACCOUNT)
    # writes are bound to the call: acc-4's balance is outside `bank.accounts.acc-1.balance`
    assert any(c.path == ("bank", "accounts", "acc-4", "balance") for c in changes)
    contract = _frame_only(toy.contracts["deposit"])
    assert miss_cause(changes, clause_patterns(contract)) is MissCause.PROBE_UNREVEALING


def test_a_predicate_covers_only_what_it_reads_in_the_post_state(toy):
    contract = _predicates_only(toy.contracts["deposit"])
    patterns = clause_patterns(contract)
    # the effect reads post.bank.accounts[*].balance: the wrong amount is covered
    assert miss_cause(_changes(toy, WRONG_AMOUNT), patterns) is MissCause.PROBE_UNREVEALING
    # no effect or invariant reads bank.next_transfer; the precondition reads `pre` only, and
    # the result is read (eff.result) — so drop that clause to let the state decide
    no_result = contract.model_copy(
        update={"effects": [c for c in contract.effects if c.id != "eff.result"]}
    )
    changes = _changes(toy, NEW_TRANSFER)
    assert any(c.path == ("bank", "next_transfer") for c in changes)
    assert miss_cause(changes, clause_patterns(no_result)) is MissCause.NO_CLAUSE
    # with the frame clauses back, scope [bank] outside the writes covers it
    with_frame = no_result.model_copy(update={"frame": toy.contracts["deposit"].frame})
    assert miss_cause(changes, clause_patterns(with_frame)) is MissCause.PROBE_UNREVEALING


def test_no_change_is_unreached(toy):
    original = observe(toy.adapter, "deposit", CORPUS)
    assert call_changes(original, original, CORPUS) == []
    assert miss_cause([], clause_patterns(toy.contracts["deposit"])) is MissCause.UNREACHED


def test_outcome_result_and_reset_markers(toy):
    patterns = clause_patterns(toy.contracts["deposit"])
    args = CORPUS[0]
    assert covered(Change(args, OUTCOME), patterns)
    assert covered(Change(args, RESULT), patterns)  # eff.result reads the result
    no_result = clause_patterns(_frame_only(toy.contracts["deposit"]))
    assert not covered(Change(args, RESULT), no_result)
    leak = Change(args, path=("bank", "transfers", 1), after_reset=True)
    assert covered(leak, patterns)  # reset: restores_initial
    no_reset = clause_patterns(toy.contracts["deposit"].model_copy(update={"reset": None}))
    assert not covered(leak, no_reset)

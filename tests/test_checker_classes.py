"""Each defect class: a hand-written defective variant of a toy tool is reported with that
class, and a hand-written harmless refactoring of the same tool is not flagged.

Variants replace the module attribute the adapter resolves at call time, as a mutant will.
"""

from __future__ import annotations

import pytest

import toy_domain.bank as bank_mod
import toy_domain.inventory as inv_mod
from harness.checker import ReferenceChecker
from harness.checker.verdicts import DefectClass, ToolReport, Verdict
from harness.targets.registry import load_target


@pytest.fixture(scope="module")
def target():
    return load_target("toy_domain")


def check(target, tool: str) -> ToolReport:
    return ReferenceChecker().check(target, [tool]).tool(tool)


def clause(report: ToolReport, clause_id: str):
    return next(c for c in report.clauses if c.clause_id == clause_id)


def assert_clean(report: ToolReport) -> None:
    flagged = [(c.clause_id, c.defect_class) for c in report.violations()]
    assert report.verdict is Verdict.CONFORMS, flagged
    assert not [c for c in report.clauses if c.verdict is Verdict.UNTESTABLE]


# --- Phantom Effect ---------------------------------------------------------------------


def phantom_transfer(bank, from_account, to_account, amount, memo=""):
    for account in (from_account, to_account):
        if account not in bank.accounts:
            raise ValueError(f"Account {account} does not exist")
    if from_account == to_account:
        raise ValueError("Source and destination must differ")
    if bank.accounts[from_account].frozen or bank.accounts[to_account].frozen:
        raise ValueError("Account is frozen")
    if amount <= 0:
        raise ValueError("Amount must be positive")
    if amount > bank.accounts[from_account].balance:
        raise ValueError("Insufficient funds")
    record_id = f"t-{bank.next_transfer}"
    return {"id": record_id, "from": from_account, "to": to_account, "amount": amount, "memo": memo}


def inlined_transfer(bank, from_account, to_account, amount, memo=""):
    accounts = bank.accounts
    if from_account not in accounts or to_account not in accounts:
        raise ValueError("Account does not exist")
    if from_account == to_account:
        raise ValueError("Source and destination must differ")
    if accounts[from_account].frozen or accounts[to_account].frozen:
        raise ValueError("Account is frozen")
    if amount <= 0:
        raise ValueError("Amount must be positive")
    if amount > accounts[from_account].balance:
        raise ValueError("Insufficient funds")
    accounts[to_account].balance = accounts[to_account].balance + amount  # reordered writes
    accounts[from_account].balance = accounts[from_account].balance - amount
    record = bank._record_transfer(from_account, to_account, amount, memo)
    bank._touch()
    return record.to_json()


def test_phantom_effect_detected(target, monkeypatch):
    monkeypatch.setattr(bank_mod, "transfer", phantom_transfer)
    report = check(target, "transfer")
    assert report.verdict is Verdict.VIOLATES
    debit = clause(report, "eff.debit")
    assert debit.defect_class is DefectClass.PHANTOM_EFFECT
    assert debit.witness is not None and debit.witness.probes[-1].success
    assert DefectClass.PARTIAL_EFFECT not in report.defect_classes()


def test_phantom_refactoring_not_flagged(target, monkeypatch):
    monkeypatch.setattr(bank_mod, "transfer", inlined_transfer)
    assert_clean(check(target, "transfer"))


# --- Unenforced Precondition --------------------------------------------------------------


def unguarded_deposit(bank, account_id, amount):
    if account_id not in bank.accounts:
        raise ValueError(f"Account {account_id} does not exist")
    # the frozen-account guard is gone
    if amount <= 0:
        raise ValueError(f"Amount must be positive, got {amount}")
    bank._credit(account_id, amount)
    bank._touch()
    return f"Deposited {amount} into {account_id}."


def _require_active(bank, account_id):
    if bank.accounts[account_id].frozen:
        raise ValueError("This account cannot take deposits while frozen")  # reworded


def helper_guard_deposit(bank, account_id, amount):
    if account_id not in bank.accounts:
        raise ValueError(f"No account {account_id}")
    _require_active(bank, account_id)
    if amount <= 0:
        raise ValueError("Deposits must be positive")
    bank._credit(account_id, amount)
    bank._touch()
    return (
        f"Deposited {amount} into {account_id}. New balance: {bank.accounts[account_id].balance}."
    )


def test_unenforced_precondition_detected(target, monkeypatch):
    monkeypatch.setattr(bank_mod, "deposit", unguarded_deposit)
    report = check(target, "deposit")
    frozen = clause(report, "pre.not_frozen")
    assert frozen.verdict is Verdict.VIOLATES
    assert frozen.defect_class is DefectClass.UNENFORCED_PRECONDITION
    assert "succeeded" in (frozen.detail or "")
    assert clause(report, "pre.account_exists").verdict is Verdict.CONFORMS


def test_precondition_refactoring_not_flagged(target, monkeypatch):
    monkeypatch.setattr(bank_mod, "deposit", helper_guard_deposit)
    assert_clean(check(target, "deposit"))


# --- Ignored Argument ---------------------------------------------------------------------


def memo_dropping_transfer(bank, from_account, to_account, amount, memo=""):
    return bank_mod.__dict__["_original_transfer"](bank, from_account, to_account, amount, "")


def renamed_local_transfer(bank, from_account, to_account, amount, memo=""):
    note = memo  # a renamed local is not an ignored argument
    return bank_mod.__dict__["_original_transfer"](bank, from_account, to_account, amount, note)


@pytest.fixture
def original_transfer(monkeypatch):
    monkeypatch.setitem(bank_mod.__dict__, "_original_transfer", bank_mod.transfer)


def test_ignored_argument_detected(target, monkeypatch, original_transfer):
    monkeypatch.setattr(bank_mod, "transfer", memo_dropping_transfer)
    report = check(target, "transfer")
    memo = clause(report, "arg.memo")
    assert memo.verdict is Verdict.VIOLATES
    assert memo.defect_class is DefectClass.IGNORED_ARGUMENT
    assert memo.witness is not None and len(memo.witness.probes) == 2
    assert clause(report, "arg.amount").verdict is Verdict.CONFORMS


def test_ignored_argument_refactoring_not_flagged(target, monkeypatch, original_transfer):
    monkeypatch.setattr(bank_mod, "transfer", renamed_local_transfer)
    assert_clean(check(target, "transfer"))


def test_ignored_argument_silent_when_effects_agree(target):
    # update_item(price=None) and update_item(price=<current price>) leave equal post-states
    # because their effects agree: no variant of that kind may be used as a witness.
    report = check(target, "update_item")
    assert clause(report, "arg.price").verdict is Verdict.CONFORMS


# --- Partial Effect -----------------------------------------------------------------------


def creditless_transfer(bank, from_account, to_account, amount, memo=""):
    if from_account not in bank.accounts or to_account not in bank.accounts:
        raise ValueError("Account does not exist")
    if from_account == to_account:
        raise ValueError("Source and destination must differ")
    if bank.accounts[from_account].frozen or bank.accounts[to_account].frozen:
        raise ValueError("Account is frozen")
    if amount <= 0 or amount > bank.accounts[from_account].balance:
        raise ValueError("Bad amount")
    bank._debit(from_account, amount)
    record = bank._record_transfer(from_account, to_account, amount, memo)
    bank._touch()
    return record.to_json()


def test_partial_effect_detected(target, monkeypatch):
    monkeypatch.setattr(bank_mod, "transfer", creditless_transfer)
    report = check(target, "transfer")
    credit = clause(report, "eff.credit")
    assert credit.defect_class is DefectClass.PARTIAL_EFFECT
    assert clause(report, "eff.debit").verdict is Verdict.CONFORMS
    assert credit.witness is not None and credit.witness.state_diff


# --- Invariant Break ----------------------------------------------------------------------


def leaky_release(inventory, reservation_id):
    if reservation_id not in inventory.reservations:
        raise ValueError(f"Reservation {reservation_id} does not exist")
    reservation = inventory._remove_reservation(reservation_id)
    return f"Released {reservation.quantity} units of {reservation.sku} ({reservation_id})."


def restructured_release(inventory, reservation_id):
    reservation = inventory.reservations.get(reservation_id)
    if reservation is None:
        raise ValueError(f"Reservation {reservation_id} does not exist")
    item = inventory.items[reservation.sku]
    item.reserved = item.reserved - reservation.quantity
    del inventory.reservations[reservation_id]
    return f"Released {reservation.quantity} units of {reservation.sku} ({reservation_id})."


def test_invariant_break_detected(target, monkeypatch):
    monkeypatch.setattr(inv_mod, "release_reservation", leaky_release)
    report = check(target, "release_reservation")
    invariant = clause(report, "inv.reserved_matches_reservations")
    assert invariant.verdict is Verdict.VIOLATES
    assert invariant.defect_class is DefectClass.INVARIANT_BREAK


def test_invariant_break_found_by_sequence(target, monkeypatch):
    # reserve_item itself is correct; the break shows only when release follows it.
    monkeypatch.setattr(inv_mod, "release_reservation", leaky_release)
    report = check(target, "reserve_item")
    invariant = clause(report, "inv.reserved_matches_reservations")
    assert invariant.defect_class is DefectClass.INVARIANT_BREAK
    kinds = [p.kind for p in invariant.witness.probes]
    assert kinds[0] == "sequence" and len(kinds) >= 2


def test_invariant_refactoring_not_flagged(target, monkeypatch):
    monkeypatch.setattr(inv_mod, "release_reservation", restructured_release)
    assert_clean(check(target, "release_reservation"))


# --- Reset Leak ---------------------------------------------------------------------------


def leaky_bank_reset(self):
    self.accounts = bank_mod.seed_accounts()
    self.next_account = bank_mod.SEED_NEXT_ACCOUNT
    self.next_transfer = bank_mod.SEED_NEXT_TRANSFER
    self.last_activity = bank_mod.SEED_LAST_ACTIVITY  # transfers are never restored


def reordered_bank_reset(self):
    self.last_activity = bank_mod.SEED_LAST_ACTIVITY
    self.next_transfer = bank_mod.SEED_NEXT_TRANSFER
    self.transfers = bank_mod.seed_transfers()
    self.next_account = bank_mod.SEED_NEXT_ACCOUNT
    self.accounts = bank_mod.seed_accounts()


def test_reset_leak_detected(target, monkeypatch):
    monkeypatch.setattr(bank_mod.Bank, "reset", leaky_bank_reset)
    report = check(target, "transfer")
    reset = clause(report, "reset")
    assert reset.defect_class is DefectClass.RESET_LEAK
    assert any(change.path.startswith("bank.transfers") for change in reset.witness.state_diff)
    # deposit writes no transfer, but its sequence probe (shared invariant) calls transfer
    assert clause(check(target, "deposit"), "reset").defect_class is DefectClass.RESET_LEAK
    # a tool of another service leaves nothing for this leak to show
    assert clause(check(target, "lock_inventory"), "reset").verdict is Verdict.CONFORMS


def test_reset_refactoring_not_flagged(target, monkeypatch):
    monkeypatch.setattr(bank_mod.Bank, "reset", reordered_bank_reset)
    assert_clean(check(target, "transfer"))


# --- the two clauses the six classes do not cover -----------------------------------------


def negated_guard_deposit(bank, account_id, amount):
    if account_id not in bank.accounts:
        raise ValueError(f"Account {account_id} does not exist")
    if not bank.accounts[account_id].frozen:  # negated guard
        raise ValueError(f"Account {account_id} is frozen")
    if amount <= 0:
        raise ValueError(f"Amount must be positive, got {amount}")
    bank._credit(account_id, amount)
    bank._touch()
    return f"Deposited {amount} into {account_id}."


def neighbour_touching_deposit(bank, account_id, amount):
    result = bank_mod.__dict__["_original_deposit"](bank, account_id, amount)
    bank.accounts["acc-2"].owner = "mallory"
    return result


def test_refused_legal_call_detected(target, monkeypatch):
    monkeypatch.setattr(bank_mod, "deposit", negated_guard_deposit)
    report = check(target, "deposit")
    assert clause(report, "success").defect_class is DefectClass.REFUSED_LEGAL_CALL
    assert clause(report, "pre.not_frozen").defect_class is DefectClass.UNENFORCED_PRECONDITION


def test_frame_break_detected(target, monkeypatch):
    monkeypatch.setitem(bank_mod.__dict__, "_original_deposit", bank_mod.deposit)
    monkeypatch.setattr(bank_mod, "deposit", neighbour_touching_deposit)
    frame = clause(check(target, "deposit"), "frame.bank")
    assert frame.defect_class is DefectClass.FRAME_BREAK
    assert any(c.path == "bank.accounts.acc-2.owner" for c in frame.witness.state_diff)


def truthy_update_item(inventory, sku, price=None, min_stock=None):
    if sku not in inventory.items:
        raise ValueError(f"Item {sku} does not exist")
    if price is not None and price < 0:
        raise ValueError("Price must not be negative")
    if min_stock is not None and min_stock < 0:
        raise ValueError("Minimum stock must not be negative")
    item = inventory.items[sku]
    if price:  # 0 is a real price, and is dropped here
        item.price = price
    if min_stock:
        item.min_stock = min_stock
    return item.to_json()


def test_falsy_argument_defect_detected(target, monkeypatch):
    monkeypatch.setattr(inv_mod, "update_item", truthy_update_item)
    report = check(target, "update_item")
    assert report.verdict is Verdict.VIOLATES
    witnessed = [p.args for c in report.violations() for p in c.witness.probes]
    assert any(args.get("price") == 0 or args.get("min_stock") == 0 for args in witnessed)


def test_every_original_toy_tool_conforms(target):
    report = ReferenceChecker().check(target)
    assert len(report.tools) == 24
    for tool in report.tools:
        assert_clean(tool)


def test_check_is_deterministic(target):
    first = ReferenceChecker(seed=3).check(target).model_dump()
    second = ReferenceChecker(seed=3).check(target).model_dump()
    assert first == second


def writeless_rename(calendar, meeting_id, title):
    if meeting_id not in calendar.meetings:
        raise ValueError(f"Meeting {meeting_id} does not exist")
    if title == "":
        raise ValueError("Title must not be empty")
    meeting = calendar.meetings[meeting_id]
    return {"meeting_id": meeting_id, **meeting.to_json()}


def test_phantom_not_hidden_by_an_effect_on_the_result(target, monkeypatch):
    # eff.result (the returned meeting equals the stored one) holds although nothing was
    # written; the call changed no state, so the failing title effect is a phantom effect.
    import toy_domain.calendar_service as cal_mod

    monkeypatch.setattr(cal_mod, "rename_meeting", writeless_rename)
    report = check(target, "rename_meeting")
    assert clause(report, "eff.result").verdict is Verdict.CONFORMS
    assert clause(report, "eff.title_changed").defect_class is DefectClass.PHANTOM_EFFECT

"""Tests for the static scanner: each check's lead, its look-alikes, and the entry points."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.checker.verdicts import DefectClass
from harness.scanner import ScanCheck, ScanError, ScanFlag, scan_files, scan_source

FILE = "tools/bank.py"


def scan(source: str, **kwargs: object) -> list[ScanFlag]:
    return scan_source(textwrap.dedent(source), file=FILE, **kwargs)  # type: ignore[arg-type]


def of(flags: list[ScanFlag], check: ScanCheck) -> list[ScanFlag]:
    return [f for f in flags if f.check is check]


# --------------------------------------------------------------------------- literal returns


def test_literal_success_return_before_any_write_is_flagged() -> None:
    flags = scan(
        """\
        def transfer(bank, from_account: str, to_account: str, amount: int) -> str:
            if from_account == to_account:
                return "Transfer done."
            bank.accounts[from_account] -= amount
            bank.accounts[to_account] += amount
            return "Transfer done."
        """
    )
    [flag] = of(flags, ScanCheck.LITERAL_SUCCESS_RETURN)
    assert flag.function == "transfer"
    assert flag.line == 3
    assert flag.class_hint is DefectClass.PHANTOM_EFFECT
    assert flag.file == FILE
    assert "'Transfer done.'" in flag.message
    assert "no state write before it" in flag.message


def test_literal_success_return_covers_fstrings_of_params_and_constant_dicts() -> None:
    flags = scan(
        """\
        class Bank:
            def debit(self, account: str, amount: int) -> dict:
                if amount < 100:
                    return {"status": "ok", "message": f"debited {amount}"}
                self.ledger.append((account, amount))
                return {"status": "ok"}

        def close_account(bank, account_id: str) -> str:
            for acct in bank.pending:
                if acct == account_id:
                    return f"Account {account_id} closed."
            del bank.accounts[account_id]
            return "closed"
        """
    )
    found = [(f.function, f.line) for f in of(flags, ScanCheck.LITERAL_SUCCESS_RETURN)]
    assert found == [("Bank.debit", 4), ("close_account", 11)]


def test_literal_return_lookalikes_are_not_flagged() -> None:
    flags = scan(
        """\
        def _debit(bank, account, amount):
            bank.accounts[account] -= amount

        def transfer(bank, from_account: str, to_account: str, amount: int) -> str:
            if amount > bank.accounts[from_account]:
                return "Error: insufficient funds"
            if from_account in bank.frozen:
                return {"success": False, "reason": "frozen"}
            _debit(bank, from_account, amount)          # a write made by a same-module helper
            if from_account == to_account:
                return "Transfer done."
            bank.accounts[to_account] += amount
            return "Transfer done."

        def describe(bank, account: str) -> str:
            return "Everything is fine."                 # not a writer: nothing to fake

        def lookup(bank, account: str) -> tuple:
            if account not in bank.cache:
                return (None, -1)                        # a sentinel, not a success claim
            bank.hits += 1
            return bank.cache[account]

        def summary(bank, account: str) -> str:
            out = {}
            out["account"] = account                     # a local the function built
            out.update(kind="summary")
            return "done"

        def freeze(bank, account: str) -> str:
            if account in bank.frozen:
                return "Account already frozen."         # a no-op reply, not a success claim
            bank.frozen.add(account)
            return "Account frozen."
        """
    )
    assert of(flags, ScanCheck.LITERAL_SUCCESS_RETURN) == []


# --------------------------------------------------------------------------- commented guards


def test_commented_out_if_raise_is_flagged() -> None:
    flags = scan(
        """\
        class InsufficientFunds(Exception):
            pass

        def withdraw(bank, account: str, amount: int) -> int:
            # if bank.accounts[account] < amount:
            #     raise InsufficientFunds(account)
            bank.accounts[account] -= amount
            return bank.accounts[account]
        """
    )
    [flag] = of(flags, ScanCheck.COMMENTED_OUT_GUARD)
    assert flag.function == "withdraw"
    assert flag.line == 5
    assert flag.class_hint is DefectClass.UNENFORCED_PRECONDITION
    assert "if bank.accounts[account] < amount: raise InsufficientFunds(account)" in flag.message


def test_commented_guard_variants_are_found() -> None:
    flags = scan(
        """\
        def withdraw(bank, account: str, amount: int) -> int:
            # if amount <= 0:
            # raise ValueError("amount must be positive")
            bank.accounts[account] -= amount
            return bank.accounts[account]

        def book(env, seat: str) -> str:
            # Disabled while the seat map is migrated:
            # assert seat not in env.taken, seat
            env.taken.add(seat)
            return seat

        def refund(env, order: str) -> None:
            env.refunds.append(order)
            # raise RuntimeError("refunds are closed")
        """
    )
    found = [(f.function, f.line) for f in of(flags, ScanCheck.COMMENTED_OUT_GUARD)]
    assert found == [("withdraw", 2), ("book", 9), ("refund", 15)]
    assert "assert seat not in env.taken, seat" in flags[1].message


def test_commented_prose_and_non_guard_code_are_not_flagged() -> None:
    flags = scan(
        """\
        # if DEBUG:
        #     raise SystemExit   (module level: outside any function)

        def withdraw(bank, account: str, amount: int) -> int:
            # We raise the limit for premium users in a later release.
            # An assert here would fire during the nightly batch.
            # balance = bank.accounts[account]
            bank.accounts[account] -= amount  # raise if negative? see ticket 12
            return bank.accounts[account]
        """
    )
    assert of(flags, ScanCheck.COMMENTED_OUT_GUARD) == []


# --------------------------------------------------------------------------- logged parameters


def test_parameter_only_logged_is_flagged() -> None:
    flags = scan(
        """\
        import logging

        logger = logging.getLogger(__name__)

        def transfer(bank, from_account: str, to_account: str, amount: int, memo: str = ""):
            logger.info("memo=%s", memo)
            bank.accounts[from_account] -= amount
            bank.accounts[to_account] += amount
            return f"Transferred {amount} ({memo})"
        """
    )
    [flag] = of(flags, ScanCheck.PARAMETER_ONLY_LOGGED)
    assert flag.function == "transfer"
    assert flag.line == 6
    assert flag.class_hint is DefectClass.IGNORED_ARGUMENT
    assert "`memo`" in flag.message


def test_parameter_only_in_messages_via_local_and_raise_is_flagged() -> None:
    flags = scan(
        """\
        def cancel(env, booking: str, reason: str) -> str:
            if booking not in env.bookings:
                raise KeyError(f"no booking {booking} ({reason})")
            del env.bookings[booking]
            msg = f"Cancelled because {reason}"
            print(msg)
            return msg.upper()
        """
    )
    assert [(f.function, f.message) for f in of(flags, ScanCheck.PARAMETER_ONLY_LOGGED)] == [
        (
            "cancel",
            "parameter `reason` is only echoed in messages/logs; it never affects state or a "
            "decision",
        )
    ]


def test_parameter_logged_and_used_is_not_flagged() -> None:
    flags = scan(
        """\
        import logging

        log = logging.getLogger(__name__)

        def transfer(bank, src: str, dst: str, amount: int, memo: str = "", tag: str = ""):
            log.debug(f"memo={memo} tag={tag}")
            bank.memos[src] = memo                          # memo reaches state
            bank.history.append(f"{src}->{dst}: {tag}")     # the f-string itself is stored
            entry = f"{amount}"
            bank.ledger.append(entry)                       # via a local, still stored
            return "ok"

        def ping(bank, unused: str) -> str:
            return "pong"

        def get_user(db, user_id: str) -> str:
            return f"{db.users[user_id]}"                   # the argument picks what is shown

        def report(bank, out) -> None:
            print(f"{len(bank.accounts)} accounts", file=out)  # routes output: a real use
        """
    )
    assert of(flags, ScanCheck.PARAMETER_ONLY_LOGGED) == []


# --------------------------------------------------------------------------- falsy tests


def test_falsy_truthiness_tests_are_flagged() -> None:
    flags = scan(
        """\
        def set_price(env, sku: str, price: float | None = None, qty: "int" = 1) -> None:
            if price:
                env.prices[sku] = price
            elif not sku:
                raise ValueError("sku")
            env.qty[sku] = qty or 1
        """
    )
    found = of(flags, ScanCheck.FALSY_TRUTHINESS_TEST)
    assert [f.line for f in found] == [2, 4, 6]
    assert {f.function for f in found} == {"set_price"}
    assert all(f.class_hint is DefectClass.IGNORED_ARGUMENT for f in found)
    assert found[0].message == (
        "`if price:` treats 0.0 like a missing price; use `if price is not None:`"
    )
    assert found[1].message == (
        "`elif not sku:` treats an empty string like a missing sku; use `elif sku is None:`"
    )
    assert "`qty or 1` treats 0 like a missing qty" in found[2].message


def test_falsy_lookalikes_are_not_flagged() -> None:
    flags = scan(
        """\
        from typing import Optional

        class Account: ...

        def update(
            env,
            amount: Optional[int] = None,
            notify: bool = False,
            account: Account | None = None,
            note=None,
            fallback: str = "x",
        ) -> None:
            if amount is not None:
                env.amount = amount
            if notify:
                env.notify = True
            if account:
                env.account = account
            if note:
                env.note = note
            while amount is not None and amount > 0:
                amount -= 1
            env.label = env.label or fallback     # the last operand is a value, not a test

        def tally(env, ids: list[int] | None = None, count: int = 0) -> None:
            env.ids = ids or []                   # an empty list swapped for an empty list
            env.total = count or 0
        """
    )
    assert of(flags, ScanCheck.FALSY_TRUTHINESS_TEST) == []


# --------------------------------------------------------------------------- bool | None


def test_optional_bool_truthiness_is_flagged() -> None:
    flags = scan(
        """\
        from typing import Annotated, Optional, Union

        def update(env, tid: int, recurring: bool | None = None, paid: Optional[bool] = None,
                   done: "Union[bool, None]" = None, hold: Annotated[bool | None, "x"] = None):
            t = env.transactions[tid]
            if recurring:
                t.recurring = recurring
            t.paid = paid if paid else t.paid
            while not done:
                break
            env.hold = bool(hold)
        """
    )
    found = of(flags, ScanCheck.OPTIONAL_BOOL_TRUTHINESS)
    assert [(f.line, f.message.split("`")[1]) for f in found] == [
        (6, "if recurring:"),
        (8, "... if paid else ..."),
        (9, "while not done:"),
        (11, "bool(hold)"),
    ]
    assert found[0].message.endswith("use `if recurring is not None:`")
    assert all(f.class_hint is DefectClass.IGNORED_ARGUMENT for f in found)
    # not a falsy_truthiness_test as well: bool has no falsy value other than its own False
    assert of(flags, ScanCheck.FALSY_TRUTHINESS_TEST) == []


def test_optional_bool_lookalikes_are_not_flagged() -> None:
    flags = scan(
        """\
        def update(env, recurring: bool | None = None, notify: bool = False,
                   mode: bool | int | None = None, flag: bool | None = None):
            if recurring is not None:
                env.recurring = recurring
            if notify:                      # a plain bool: its truthiness is its value
                env.notify = True
            if mode:                        # not exactly bool | None
                env.mode = mode
            env.flag = flag or False        # None collapsed to False on purpose
        """
    )
    assert of(flags, ScanCheck.OPTIONAL_BOOL_TRUTHINESS) == []


# --------------------------------------------------------------------------- unused parameters


def test_unused_parameter_is_flagged() -> None:
    flags = scan(
        """\
        def invite(env, user: str, user_email: str, note: str = "") -> None:
            env.users.append(user)
            def later():
                return note                 # read in a closure: used
            env.later = later
        """,
        injected=["env"],
    )
    [flag] = of(flags, ScanCheck.UNUSED_PARAMETER)
    assert (flag.function, flag.line) == ("invite", 1)
    assert flag.message.startswith("parameter `user_email` is never read")
    assert flag.class_hint is DefectClass.IGNORED_ARGUMENT


def test_unused_parameter_lookalikes_are_not_flagged() -> None:
    flags = scan(
        """\
        from abc import abstractmethod

        def stub(env, name: str) -> None:
            \"\"\"A protocol method.\"\"\"
            ...

        def todo(env, name: str) -> None:
            raise NotImplementedError

        class Base:
            @abstractmethod
            def run(self, name: str) -> None:
                env = 1
                print(env)

        def forward(env, name: str, _unused: int = 0, *args, **kwargs) -> dict:
            return dict(locals())

        def private(env, name: str, _ignored: int = 0) -> None:
            env.name = name
        """,
        injected=["env"],
    )
    assert of(flags, ScanCheck.UNUSED_PARAMETER) == []


# --------------------------------------------------------------------------- verb pairs


def test_verb_pair_asymmetry_is_flagged() -> None:
    flags = scan(
        """\
        def reserve_item(store, sku: str, q: int) -> None:
            item = store.items[sku]
            item.reserved += q
            store.reservations[sku] = q

        def release_reservation(store, sku: str) -> None:
            store.reservations.pop(sku)
        """
    )
    [flag] = of(flags, ScanCheck.VERB_PAIR_ASYMMETRY)
    assert flag.function == "release_reservation"
    assert flag.line == 6
    assert flag.class_hint is DefectClass.INVARIANT_BREAK
    assert flag.message == "release_reservation never touches `reserved`, which reserve_item writes"


def test_verb_pair_follows_helpers_one_level_and_pairs_by_remainder() -> None:
    flags = scan(
        """\
        class Bank:
            def _credit(self, account, amount):
                self.balances[account] += amount
                self.history.append((account, amount))

            def deposit(self, account: str, amount: int) -> None:
                self._credit(account, amount)

            def withdraw(self, account: str, amount: int) -> None:
                self.balances[account] -= amount

        def open_account(bank, name: str) -> None:
            bank.accounts[name] = 0

        def close_account(bank, name: str) -> None:
            del bank.accounts[name]

        def open_ticket(bank, subject: str) -> None:
            bank.tickets.append(subject)
            bank.open_count += 1

        def close_ticket(bank, subject: str) -> None:
            bank.tickets.remove(subject)
        """
    )
    found = [(f.function, f.message) for f in of(flags, ScanCheck.VERB_PAIR_ASYMMETRY)]
    assert found == [
        ("Bank.withdraw", "withdraw never touches `history`, which deposit writes"),
        ("close_ticket", "close_ticket never touches `open_count`, which open_ticket writes"),
    ]


def test_verb_pair_touching_both_sides_is_not_flagged() -> None:
    flags = scan(
        """\
        def _set_frozen(bank, account, value):
            bank.accounts[account].frozen = value

        def freeze_account(bank, account: str) -> None:
            _set_frozen(bank, account, True)

        def unfreeze_account(bank, account: str) -> None:
            if not bank.accounts[account].frozen:
                return
            _set_frozen(bank, account, False)

        def book(env, seat: str) -> None:
            env.seats[seat] = "taken"

        def cancel(env, seat: str) -> None:
            env.seats.pop(seat)
        """
    )
    assert of(flags, ScanCheck.VERB_PAIR_ASYMMETRY) == []


# --------------------------------------------------------------------------- entry points

MIXED = """\
def transfer(bank, src: str, dst: str, amount: int, memo: str = "") -> str:
    if not amount:
        return "Transfer done."
    print(memo)
    bank.accounts[src] -= amount
    bank.accounts[dst] += amount
    return "ok"

class Inventory:
    def reserve(self, sku: str) -> None:
        self.reserved[sku] = True
        self.count += 1

    def release(self, sku: str) -> None:
        del self.reserved[sku]
"""


def test_functions_limits_the_scan() -> None:
    everything = scan_source(MIXED, file=FILE)
    assert {f.function for f in everything} == {"transfer", "Inventory.release"}

    only_transfer = scan_source(MIXED, file=FILE, functions={"transfer"})
    assert {f.function for f in only_transfer} == {"transfer"}
    assert {f.check for f in only_transfer} == {
        ScanCheck.LITERAL_SUCCESS_RETURN,
        ScanCheck.PARAMETER_ONLY_LOGGED,
        ScanCheck.FALSY_TRUTHINESS_TEST,
    }
    # The pair needs both sides selected; a qualified name selects a method.
    assert scan_source(MIXED, file=FILE, functions=["Inventory.reserve"]) == []
    both = scan_source(MIXED, file=FILE, functions=["reserve", "Inventory.release"])
    assert [f.check for f in both] == [ScanCheck.VERB_PAIR_ASYMMETRY]


def test_injected_parameters_are_excluded() -> None:
    source = """\
    import logging

    NOTES: list[str] = []

    def audit(bank: dict, note: str) -> None:
        logging.info("bank=%s", bank)
        if not note:
            return None
        NOTES.append(note)

    def is_open(bank: dict) -> bool:
        return bool(bank)
    """
    flagged = {(f.check, f.function, f.message.split("`")[1]) for f in scan(source)}
    assert flagged == {
        (ScanCheck.PARAMETER_ONLY_LOGGED, "audit", "bank"),
        (ScanCheck.FALSY_TRUTHINESS_TEST, "audit", "if not note:"),
        (ScanCheck.FALSY_TRUTHINESS_TEST, "is_open", "bool(bank)"),
    }
    kept = {(f.check, f.function, f.message.split("`")[1]) for f in scan(source, injected={"bank"})}
    assert kept == {(ScanCheck.FALSY_TRUTHINESS_TEST, "audit", "if not note:")}


def test_syntax_error_raises_scan_error_naming_file_and_line() -> None:
    with pytest.raises(ScanError, match=r"tools/bank\.py:3") as info:
        scan_source("def ok():\n    pass\ndef broken(:\n    pass\n", file=FILE)
    assert isinstance(info.value, ValueError)


def test_scanner_never_executes_the_scanned_code(tmp_path: Path) -> None:
    marker = tmp_path / "imported.txt"
    module = tmp_path / "evil.py"
    module.write_text(
        textwrap.dedent(
            f"""\
            open({str(marker)!r}, "w").write("module body ran")
            raise SystemExit("importing this module must not happen")

            def release(env, sku: str) -> str:
                open({str(marker)!r}, "w").write("function ran")
                if sku:
                    return "Released."
                env.held.remove(sku)
                return "ok"
            """
        )
    )
    flags = scan_files([(module, "pkg/evil.py")])
    assert not marker.exists()
    assert {(f.file, f.check, f.line) for f in flags} == {
        ("pkg/evil.py", ScanCheck.FALSY_TRUTHINESS_TEST, 6),
        ("pkg/evil.py", ScanCheck.LITERAL_SUCCESS_RETURN, 7),
    }


def test_flags_are_sorted_and_deterministic(tmp_path: Path) -> None:
    first = tmp_path / "a.py"
    second = tmp_path / "b.py"
    first.write_text(MIXED)
    second.write_text(MIXED)
    flags = scan_files([(second, "z_tools.py"), (first, "a_tools.py")])
    keys = [(f.file, f.line, f.check) for f in flags]
    assert keys == sorted(keys)
    assert [f.file for f in flags[: len(flags) // 2]] == ["a_tools.py"] * (len(flags) // 2)
    assert flags == scan_files([(second, "z_tools.py"), (first, "a_tools.py")])
    assert scan_source(MIXED, file=FILE) == scan_source(MIXED, file=FILE)


def test_scan_flag_is_frozen_and_strict() -> None:
    flag = scan_source(MIXED, file=FILE)[0]
    with pytest.raises(ValidationError):
        flag.line = 99  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ScanFlag(**flag.model_dump(), extra="nope")  # type: ignore[call-arg]

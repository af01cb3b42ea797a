"""A toy target with one known defect, for the score-at-risk trace (`harness trace`).

`LegacyToyAdapter` is the toy domain with `transfer` bound to `legacy_transfer`, an older
version that drops the memo: it stores "" whatever memo it is given. Every other tool, the
contracts and the environment are the toy domain's own, so the defect, the fields it should
have written and the tasks in `toy_domain.tasks` that read them are known by construction.
Load it as the target `toy_domain.legacy:LegacyToyAdapter`.
"""

from collections.abc import Callable
from typing import Any

from harness.targets.toy import ToyAdapter
from toy_domain.bank import Bank


def legacy_transfer(
    bank: Bank, from_account: str, to_account: str, amount: int, memo: str = ""
) -> dict:
    """Transfer money from one account to another.

    Debits `amount` from the source account, credits it to the destination account and
    appends a transfer record to the transfer history.

    :param from_account: ID of the account to debit, e.g. "acc-1".
    :param to_account: ID of the account to credit.
    :param amount: Amount to move, a positive whole number.
    :param memo: Free-text note stored with the transfer record. Defaults to "".

    Raises ValueError if either account does not exist.
    Raises ValueError if the source and destination are the same account.
    Raises ValueError if either account is frozen.
    Raises ValueError if the amount is not positive.
    Raises ValueError if the amount exceeds the source balance.
    Returns the transfer record: id, from, to, amount and memo.
    """
    if from_account not in bank.accounts:
        raise ValueError(f"Source account {from_account} does not exist")
    if to_account not in bank.accounts:
        raise ValueError(f"Destination account {to_account} does not exist")
    if from_account == to_account:
        raise ValueError("Source and destination must be different accounts")
    if bank.accounts[from_account].frozen:
        raise ValueError(f"Source account {from_account} is frozen")
    if bank.accounts[to_account].frozen:
        raise ValueError(f"Destination account {to_account} is frozen")
    if amount <= 0:
        raise ValueError(f"Amount must be positive, got {amount}")
    if amount > bank.accounts[from_account].balance:
        raise ValueError(f"Insufficient funds in {from_account} for a transfer of {amount}")
    bank._debit(from_account, amount)
    bank._credit(to_account, amount)
    record = bank._record_transfer(from_account, to_account, amount, "")
    bank._touch()
    return record.to_json()


class LegacyToyAdapter(ToyAdapter):
    """The toy domain with the legacy (memo-dropping) `transfer`."""

    def tool_function(self, tool: str) -> Callable[..., Any]:
        if tool == "transfer":
            # looked up at every call, so a repair applied in memory is what runs
            import toy_domain.legacy as legacy

            return legacy.legacy_transfer
        return super().tool_function(tool)

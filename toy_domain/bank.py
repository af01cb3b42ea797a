"""The toy bank: accounts with integer balances, a transfer log, and account freezes.

Every writer stamps `last_activity` with the wall clock, the one volatile path of the toy
domain.
"""

import time
from dataclasses import dataclass


@dataclass
class Account:
    owner: str
    balance: int
    frozen: bool = False
    freeze_reason: str | None = None

    def to_json(self) -> dict:
        return {
            "owner": self.owner,
            "balance": self.balance,
            "frozen": self.frozen,
            "freeze_reason": self.freeze_reason,
        }


@dataclass
class Transfer:
    id: str
    from_account: str
    to_account: str
    amount: int
    memo: str

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "from": self.from_account,
            "to": self.to_account,
            "amount": self.amount,
            "memo": self.memo,
        }


SEED_NEXT_ACCOUNT = 6
SEED_NEXT_TRANSFER = 2
SEED_LAST_ACTIVITY = 0.0


def seed_accounts() -> dict[str, Account]:
    """New Account objects for the seed state (never shared between environments)."""
    return {
        "acc-1": Account(owner="alice", balance=500),
        "acc-2": Account(owner="bob", balance=120),
        "acc-3": Account(owner="carol", balance=75, frozen=True, freeze_reason="fraud review"),
        "acc-4": Account(owner="dave", balance=40),
        "acc-5": Account(owner="erin", balance=10, frozen=True, freeze_reason="court order"),
    }


def seed_transfers() -> list[Transfer]:
    """New Transfer objects for the seed state."""
    return [Transfer(id="t-1", from_account="acc-1", to_account="acc-2", amount=30, memo="lunch")]


class Bank:
    """The bank service: the object the bank tools receive as `bank`."""

    def __init__(self) -> None:
        self.accounts: dict[str, Account] = seed_accounts()
        self.transfers: list[Transfer] = seed_transfers()
        self.next_account: int = SEED_NEXT_ACCOUNT
        self.next_transfer: int = SEED_NEXT_TRANSFER
        self.last_activity: float = SEED_LAST_ACTIVITY

    def reset(self) -> None:
        """Restore the seed state."""
        # One statement per field (not a generic copy), so each is a reset mutation site.
        self.accounts = seed_accounts()
        self.transfers = seed_transfers()
        self.next_account = SEED_NEXT_ACCOUNT
        self.next_transfer = SEED_NEXT_TRANSFER
        self.last_activity = SEED_LAST_ACTIVITY

    def to_json(self) -> dict:
        return {
            "accounts": {key: account.to_json() for key, account in self.accounts.items()},
            "transfers": [record.to_json() for record in self.transfers],
            "next_account": self.next_account,
            "next_transfer": self.next_transfer,
            "last_activity": self.last_activity,
        }

    def _touch(self) -> None:
        self.last_activity = time.time()

    def _new_account(self, owner: str, balance: int) -> str:
        account_id = f"acc-{self.next_account}"
        self.next_account += 1
        self.accounts[account_id] = Account(owner=owner, balance=balance)
        return account_id

    def _credit(self, account_id: str, amount: int) -> None:
        self.accounts[account_id].balance += amount

    def _debit(self, account_id: str, amount: int) -> None:
        self.accounts[account_id].balance -= amount

    def _record_transfer(
        self, from_account: str, to_account: str, amount: int, memo: str
    ) -> Transfer:
        record = Transfer(
            id=f"t-{self.next_transfer}",
            from_account=from_account,
            to_account=to_account,
            amount=amount,
            memo=memo,
        )
        self.transfers.append(record)
        self.next_transfer += 1
        return record


def open_account(bank: Bank, owner: str, initial_deposit: int = 0) -> dict:
    """Open a new bank account.

    Creates an account for `owner` holding `initial_deposit`, under the next sequential id.

    :param owner: Name of the account owner.
    :param initial_deposit: Opening balance of the account, zero or more. Defaults to 0.

    Raises ValueError if the owner is empty.
    Raises ValueError if the initial deposit is negative.
    The new account gets the id "acc-N", where N is the next account number; numbers count up.
    The new account is owned by the given owner and its balance is the initial deposit.
    The new account is not frozen and has no freeze reason.
    Existing accounts are left unchanged.
    No account balance ever goes negative.
    The account is always opened unless a ValueError is raised.
    Returns a dict with the new account_id and its balance.
    """
    if owner == "":
        raise ValueError("Owner must not be empty")
    if initial_deposit < 0:
        raise ValueError(f"Initial deposit must not be negative, got {initial_deposit}")
    account_id = bank._new_account(owner, initial_deposit)
    bank._touch()
    return {"account_id": account_id, "balance": bank.accounts[account_id].balance}


def deposit(bank: Bank, account_id: str, amount: int) -> str:
    """Deposit money into an account.

    Adds `amount` to the balance of the account.

    :param account_id: ID of the account to credit, e.g. "acc-1".
    :param amount: Amount to deposit, a positive whole number.

    Raises ValueError if the account does not exist.
    Raises ValueError if the account is frozen.
    Raises ValueError if the amount is not positive.
    The account balance increases by exactly the amount; nothing else in the bank changes.
    No account balance ever goes negative.
    The deposit is always applied unless a ValueError is raised.
    Returns a message with the new balance.
    """
    if account_id not in bank.accounts:
        raise ValueError(f"Account {account_id} does not exist")
    if bank.accounts[account_id].frozen:
        raise ValueError(f"Account {account_id} is frozen")
    if amount <= 0:
        raise ValueError(f"Amount must be positive, got {amount}")
    bank._credit(account_id, amount)
    bank._touch()
    balance = bank.accounts[account_id].balance
    return f"Deposited {amount} into {account_id}. New balance: {balance}."


def transfer(bank: Bank, from_account: str, to_account: str, amount: int, memo: str = "") -> dict:
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
    The source balance decreases by the amount and the destination balance increases by it.
    The transfer record holds the source, the destination, the amount and the memo.
    The record is appended to the transfer history; earlier records are kept.
    Transfer ids are "t-N", where N is the next transfer number; numbers count up.
    Only the two balances and the transfer history change in the bank.
    No account balance ever goes negative.
    The transfer is always executed unless a ValueError is raised.
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
    record = bank._record_transfer(from_account, to_account, amount, memo)
    bank._touch()
    return record.to_json()


def freeze_account(bank: Bank, account_id: str, reason: str) -> str:
    """Freeze an account.

    Marks the account as frozen and records why. A frozen account cannot receive deposits
    and cannot take part in transfers until it is unfrozen.

    :param account_id: ID of the account to freeze.
    :param reason: Why the account is frozen.

    Raises ValueError if the account does not exist.
    Raises ValueError if the account is already frozen.
    Raises ValueError if the reason is empty.
    The account becomes frozen and its freeze reason is set to the given reason.
    Only the frozen flag and the freeze reason of this account change.
    The account is always frozen unless a ValueError is raised.
    Returns a confirmation message.
    """
    if account_id not in bank.accounts:
        raise ValueError(f"Account {account_id} does not exist")
    account = bank.accounts[account_id]
    if account.frozen:
        raise ValueError(f"Account {account_id} is already frozen")
    if reason == "":
        raise ValueError("A freeze reason is required")
    account.frozen = True
    account.freeze_reason = reason
    bank._touch()
    return f"Account {account_id} frozen: {account.freeze_reason}."


def unfreeze_account(bank: Bank, account_id: str) -> str:
    """Unfreeze a frozen account.

    Lifts the freeze so the account can take deposits and transfers again.

    :param account_id: ID of the account to unfreeze.

    Raises ValueError if the account does not exist.
    Raises ValueError if the account is not frozen.
    The account is no longer frozen and its freeze reason is cleared.
    Only the frozen flag and the freeze reason of this account change.
    The account is always unfrozen unless a ValueError is raised.
    Returns a confirmation message.
    """
    if account_id not in bank.accounts:
        raise ValueError(f"Account {account_id} does not exist")
    account = bank.accounts[account_id]
    if not account.frozen:
        raise ValueError(f"Account {account_id} is not frozen")
    account.frozen = False
    account.freeze_reason = None
    bank._touch()
    return f"Account {account_id} unfrozen."


def get_balance(bank: Bank, account_id: str) -> int:
    """Get the balance of an account.

    Reads the balance without changing anything.

    :param account_id: ID of the account, e.g. "acc-1".

    Raises ValueError if the account does not exist.
    Nothing is changed.
    Returns the current balance of the account.
    """
    if account_id not in bank.accounts:
        raise ValueError(f"Account {account_id} does not exist")
    return bank.accounts[account_id].balance

"""Toy tasks: ground-truth call sequences and the evaluators that grade them.

A small task suite over the toy tools, for the score-at-risk trace (`harness trace`): each
evaluator is of one kind the trace's read-site extractor must handle, so the basis of every
(defect, task) row is known by construction. With the legacy `transfer` that drops the memo
(`toy_domain.legacy`), the expected rows are:

| task | evaluator reads | basis for the memo defect | grounding |
|---|---|---|---|
| pay_rent | `t.memo` of a comprehension over `post.bank.transfers` | exact_field | state |
| count_transfers | `len(post.bank.transfers)` | collection_only | state |
| audit_unchanged | `post.to_json() == pre.to_json()` | whole_state_hash | state |
| trust_message | the tool's returned text | not exposed | transcript |
| refund_noted | the returned text and `post.bank.transfers[-1].memo` | exact_field | mixed |
| plain_transfer | `get_path(post, "bank.transfers")[-1].memo == ""` | exact_field | state |
| three_hops | `.memo`, read by a helper three calls deep | exact_field | state |
| four_hops | `.memo`, read by a helper four calls deep | unresolved | state |
| balance_only | `post.bank.accounts["acc-2"].balance` | not exposed | state |

`plain_transfer` was written against the legacy tool: it asserts that the last transfer has
no memo, so it passes the defective tool and fails the repaired one on a path that appends a
transfer with a memo (the positive control beside its repair).

An evaluator takes `(transcript, pre, post)`: the tools' returned texts in call order, and
the environment before the first call and after the last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toy_domain.environment import ToyEnvironment

Transcript = list[str]


@dataclass(frozen=True)
class ToyCall:
    function: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToyTask:
    id: str
    prompt: str
    ground_truth: tuple[ToyCall, ...]
    utility: Callable[[Transcript, ToyEnvironment, ToyEnvironment], bool]


def get_path(state: Any, dotted: str) -> Any:
    """The value at a dotted attribute path of `state`."""
    value = state
    for name in dotted.split("."):
        value = getattr(value, name)
    return value


def _pay_rent(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return any(t.memo == "rent" for t in post.bank.transfers if t.amount == 50)


def _count_transfers(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return len(post.bank.transfers) == len(pre.bank.transfers) + 1


def _audit_unchanged(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return post.to_json() == pre.to_json()


def _trust_message(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return '"id": "t-' in transcript[-1]


def _refund_noted(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return "Deposited" in transcript[0] and post.bank.transfers[-1].memo == "refund"


def _plain_transfer(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return get_path(post, "bank.transfers")[-1].memo == ""


def _three_hops(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return _hop_one(post)


def _four_hops(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return _deep_one(post)


def _hop_one(state: ToyEnvironment) -> bool:
    return _hop_two(state.bank)


def _hop_two(bank: Any) -> bool:
    return _hop_three(bank.transfers)


def _hop_three(transfers: Any) -> bool:
    return transfers[-1].memo == "gift"


def _deep_one(state: ToyEnvironment) -> bool:
    return _deep_two(state)


def _deep_two(state: ToyEnvironment) -> bool:
    return _deep_three(state.bank)


def _deep_three(bank: Any) -> bool:
    return _deep_four(bank.transfers)


def _deep_four(transfers: Any) -> bool:
    return transfers[-1].memo == "gift"


def _balance_only(transcript: Transcript, pre: ToyEnvironment, post: ToyEnvironment) -> bool:
    return post.bank.accounts["acc-2"].balance == pre.bank.accounts["acc-2"].balance + 30


def _transfer(source: str, destination: str, amount: int, memo: str | None = None) -> ToyCall:
    args: dict[str, Any] = {"from_account": source, "to_account": destination, "amount": amount}
    if memo is not None:
        args["memo"] = memo
    return ToyCall("transfer", args)


TASKS: tuple[ToyTask, ...] = (
    ToyTask(
        "pay_rent", "Pay 50 rent to bob.", (_transfer("acc-1", "acc-2", 50, "rent"),), _pay_rent
    ),
    ToyTask(
        "count_transfers",
        "Send dave 20 as a gift.",
        (_transfer("acc-1", "acc-4", 20, "gift"),),
        _count_transfers,
    ),
    ToyTask(
        "audit_unchanged",
        "What is alice's balance?",
        (ToyCall("get_balance", {"account_id": "acc-1"}),),
        _audit_unchanged,
    ),
    ToyTask(
        "trust_message",
        "Buy bob lunch.",
        (_transfer("acc-2", "acc-4", 10, "lunch"),),
        _trust_message,
    ),
    ToyTask(
        "refund_noted",
        "Deposit 30 for bob, then refund alice 5 from it.",
        (
            ToyCall("deposit", {"account_id": "acc-2", "amount": 30}),
            _transfer("acc-2", "acc-1", 5, "refund"),
        ),
        _refund_noted,
    ),
    ToyTask(
        "plain_transfer",
        "Move 5 from alice to dave.",
        (_transfer("acc-1", "acc-4", 5),),
        _plain_transfer,
    ),
    ToyTask("three_hops", "Gift dave 7.", (_transfer("acc-1", "acc-4", 7, "gift"),), _three_hops),
    ToyTask("four_hops", "Gift dave 8.", (_transfer("acc-1", "acc-4", 8, "gift"),), _four_hops),
    ToyTask(
        "balance_only",
        "Deposit 30 for bob.",
        (ToyCall("deposit", {"account_id": "acc-2", "amount": 30}),),
        _balance_only,
    ),
)

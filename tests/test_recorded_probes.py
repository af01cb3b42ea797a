"""Reference checker 1.3.0: probes from recorded pre-states, and pools drawn without
shuffling whole harvests. Hand-made mutants of the toy domain's `transfer` only."""

from __future__ import annotations

import itertools
import random
import textwrap
from pathlib import Path

import pytest
from test_runner import hand_mutant

from harness.checker import ReferenceChecker
from harness.checker.probes import WHOLE_SHUFFLE, seeded_order
from harness.checker.verdicts import Verdict
from harness.mutation.apply import applied
from harness.mutation.sites import tool_sites
from harness.targets.recorded import PrefixCall, RecordedCall, read_corpus
from harness.targets.registry import Target, load_target

CORPORA = Path(__file__).resolve().parent.parent / "corpora"

# `transfer` that drops the memo "refund": only a state a task reaches asks for that memo
DROPS_REFUND = """
def transfer(bank, from_account, to_account, amount, memo=""):
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
    if memo == "refund":
        memo = ""
    bank._debit(from_account, amount)
    bank._credit(to_account, amount)
    record = bank._record_transfer(from_account, to_account, amount, memo)
    bank._touch()
    return record.to_json()
"""


@pytest.fixture
def toy() -> Target:
    return load_target("toy_domain")


def _refund_call() -> RecordedCall:
    corpus = read_corpus(CORPORA, "toy_domain")
    return next(c for c in corpus.calls if c.task == "refund_noted" and c.tool == "transfer")


def _mutant(toy: Target):
    site = next(s for s in tool_sites(toy.adapter, "transfer") if s.qualname == "transfer")
    return hand_mutant(toy.adapter, site, "TEST", textwrap.dedent(DROPS_REFUND).lstrip())


def test_a_defect_only_a_recorded_state_reaches_is_found_only_with_recorded_probes(toy) -> None:
    with applied(toy.adapter, _mutant(toy)):
        fresh_only = ReferenceChecker().check(toy, ["transfer"]).tool("transfer")
        toy.recorded = {"transfer": [_refund_call()]}
        with_recorded = ReferenceChecker().check(toy, ["transfer"]).tool("transfer")
    assert fresh_only.verdict is Verdict.CONFORMS
    assert with_recorded.verdict is Verdict.VIOLATES
    violated = {c.clause_id: c for c in with_recorded.violations()}
    assert "eff.record_fields" in violated or "arg.memo" in violated, sorted(violated)
    witness = next(iter(violated.values())).witness
    assert witness is not None
    kinds = [p.kind for p in witness.probes]
    assert kinds[0] == "prefix:refund_noted" and witness.probes[0].tool == "deposit"
    assert kinds[-1].startswith("recorded") or kinds[-1].startswith("variant")


def test_the_original_conforms_from_recorded_states_and_the_report_is_deterministic(toy) -> None:
    corpus = read_corpus(CORPORA, "toy_domain")
    toy.recorded = {"transfer": [c for c in corpus.calls if c.tool == "transfer"]}
    first = ReferenceChecker().check(toy, ["transfer"]).tool("transfer")
    second = ReferenceChecker().check(toy, ["transfer"]).tool("transfer")
    toy.recorded = {}
    bare = ReferenceChecker().check(toy, ["transfer"]).tool("transfer")
    assert first.verdict is Verdict.CONFORMS
    assert first.model_dump() == second.model_dump()
    assert first.probes_run > bare.probes_run  # the recorded stage ran


def test_a_recorded_call_falsifying_one_precondition_is_graded_as_its_violating_probe(
    toy,
) -> None:
    # acc-1 -> acc-1: only "different accounts" is false
    call = RecordedCall(
        task="pay_rent",
        step=0,
        tool="transfer",
        args={"from_account": "acc-1", "to_account": "acc-1", "amount": 5},
        prefix=[],
        pre_state_sha256="",
        succeeded=False,
        changed_state=False,
    )

    def graded(clause_id: str) -> int:
        report = ReferenceChecker().check(toy, ["transfer"]).tool("transfer")
        return next(c for c in report.clauses if c.clause_id == clause_id).probes_graded

    bare = graded("pre.distinct_accounts"), graded("pre.positive_amount")
    toy.recorded = {"transfer": [call]}
    recorded = graded("pre.distinct_accounts"), graded("pre.positive_amount")
    # the recorded call is distinct_accounts' probe from that state (no second one); every
    # other precondition gets one violating probe from it
    assert recorded == (bare[0] + 1, bare[1] + 1)


def test_a_prefix_runs_with_the_tools_as_bound(toy) -> None:
    """A mutant of the prefix's tool changes the recorded pre-state the probes start from."""
    call = _refund_call()
    assert [p.tool for p in call.prefix] == ["deposit"]
    bad = call.model_copy(update={"prefix": [PrefixCall(tool="deposit", args={"x": 1})]})
    toy.recorded = {"transfer": [bad]}
    report = ReferenceChecker().check(toy, ["transfer"]).tool("transfer")
    prefix_records = [
        p
        for c in report.clauses
        if c.witness is not None
        for p in c.witness.probes
        if p.kind.startswith("prefix")
    ]
    assert all(not p.success for p in prefix_records)  # the broken prefix call was refused


def test_small_harvests_are_shuffled_exactly_as_before_and_large_ones_lazily() -> None:
    from harness.checker.probes import Harvest, candidate_pool
    from harness.contracts.model import ArgumentSpec

    spec = ArgumentSpec(type="str")
    strings = [f"s{i:04d}" for i in range(100)]
    expected = list(strings)
    random.Random(5).shuffle(expected)  # 1.2.0: the whole harvest shuffled, edges first
    pool = candidate_pool("x", spec, Harvest(strings=list(strings)), random.Random(5))
    assert pool == ["", "zz-unknown", *expected[:30]]
    large = [f"s{i:06d}" for i in range(WHOLE_SHUFFLE * 50)]
    pool = candidate_pool("x", spec, Harvest(strings=list(large)), random.Random(5))
    assert pool[:2] == ["", "zz-unknown"] and len(pool) == 32 and set(pool[2:]) <= set(large)
    assert pool == candidate_pool("x", spec, Harvest(strings=list(large)), random.Random(5))
    drawn = list(seeded_order(large, random.Random(5)))
    assert sorted(drawn) == large and drawn != large
    assert drawn == list(seeded_order(large, random.Random(5)))
    first = list(itertools.islice(seeded_order(large, random.Random(5)), 3))
    assert first == drawn[:3]
    assert pool[2:] == drawn[:30]  # the lazy order is the pool's order

"""compile_target's cache: reused for the same contracts, never for a swapped-in one."""

from __future__ import annotations

from harness.checker import compile_target
from harness.targets.registry import load_target


def test_same_contracts_reuse_the_compiled_ones():
    target = load_target("toy_domain")
    first, second = compile_target(target), compile_target(target)
    assert first == second and first is not second  # a fresh dict: callers may change it
    assert all(first[tool] is second[tool] for tool in first)


def test_a_swapped_contract_is_compiled_again():
    target = load_target("toy_domain")
    before = compile_target(target)
    tool = sorted(target.contracts)[0]
    contract = target.contracts[tool]
    target.contracts[tool] = contract.model_copy(
        update={"preconditions": contract.preconditions[:0]}
    )
    after = compile_target(target)
    assert after[tool] is not before[tool]
    assert after[tool].preconditions == ()
    assert all(after[t] is before[t] for t in before if t != tool)

"""harness.mutation.apply: a mutant applied in memory and restored, never written to a file;
stale and non-compiling mutants refused.
"""

from __future__ import annotations

import importlib
import inspect

import pytest
from mutation_support import ADAPTER, HASHES_AT_IMPORT, file_hashes

import toy_domain.bank as bank_module
from harness.mutation.apply import MutantCompileError, StaleMutant, applied, apply_in_memory
from harness.mutation.model import Pair


def test_applied_rebinds_and_restores(all_pairs: list[Pair]) -> None:
    tool_pair = next(p for p in all_pairs if p.mutant.site.qualname == "transfer")
    method_pair = next(p for p in all_pairs if p.mutant.site.qualname == "Bank._debit")
    original_tool = bank_module.transfer
    original_method = vars(bank_module.Bank)["_debit"]
    with applied(ADAPTER, tool_pair.mutant):
        assert bank_module.transfer is not original_tool
        assert ADAPTER.tool_function("transfer") is bank_module.transfer
    with applied(ADAPTER, method_pair.mutant):
        replaced = vars(bank_module.Bank)["_debit"]
        assert replaced is not original_method
        assert replaced.__qualname__ == "Bank._debit"
    assert bank_module.transfer is original_tool
    assert vars(bank_module.Bank)["_debit"] is original_method


def _binding(module: str, qualname: str) -> object:
    owner: object = importlib.import_module(module)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    return vars(owner)[name]


def test_applying_every_mutant_writes_no_file_and_restores_every_binding(
    all_pairs: list[Pair],
) -> None:
    before = file_hashes()
    mutants = {p.mutant.id: p.mutant for p in all_pairs}.values()
    sites = {(m.site.module, m.site.qualname) for m in mutants}
    bound = {site: _binding(*site) for site in sites}
    for mutant in mutants:
        with applied(ADAPTER, mutant):
            assert (
                _binding(mutant.site.module, mutant.site.qualname)
                is not bound[(mutant.site.module, mutant.site.qualname)]
            )
            env = ADAPTER.fresh()
            ADAPTER.invoke(env, "get_balance", {"account_id": "acc-1"})
            ADAPTER.reset(env)  # runs the reset-path mutants
    assert {site: _binding(*site) for site in sites} == bound
    mutant = next(m for m in mutants if m.site.qualname == "transfer")
    original = bank_module.transfer
    apply_in_memory(ADAPTER, mutant)  # the plain form leaves the mutant bound
    try:
        assert bank_module.transfer is not original
    finally:
        bank_module.transfer = original
    assert file_hashes() == before


def test_stale_source_hash_is_refused(all_pairs: list[Pair]) -> None:
    mutant = all_pairs[0].mutant
    stale_site = mutant.site.model_copy(update={"source_hash": "0" * 64})
    with pytest.raises(StaleMutant, match="draw the mutants again"):
        apply_in_memory(ADAPTER, mutant.model_copy(update={"site": stale_site}))


def test_text_that_does_not_compile_is_a_compile_error(all_pairs: list[Pair]) -> None:
    pair = next(p for p in all_pairs if p.mutant.site.qualname == "transfer")
    broken = pair.mutant.model_copy(update={"mutated_source": "def transfer(:\n    pass\n"})
    original = bank_module.transfer
    with pytest.raises(MutantCompileError):
        apply_in_memory(ADAPTER, broken)
    assert bank_module.transfer is original


def test_a_mutant_is_compiled_with_its_module_future_flags_not_the_harness(
    all_pairs: list[Pair],
) -> None:
    """apply.py has `from __future__ import annotations`; bank.py has not. An annotation that
    fails when evaluated must fail the mutant, as importing the mutated module would."""
    pair = next(p for p in all_pairs if p.mutant.site.qualname == "transfer")
    text = inspect.getsource(bank_module.transfer)
    broken = pair.mutant.model_copy(
        update={"mutated_source": text.replace("amount: int", "amount: int + None", 1)}
    )
    assert broken.mutated_source != text
    original = bank_module.transfer
    with pytest.raises(MutantCompileError, match="fails where it is defined: TypeError"):
        apply_in_memory(ADAPTER, broken)
    assert bank_module.transfer is original


def test_installed_files_unchanged_by_this_module() -> None:
    assert file_hashes() == HASHES_AT_IMPORT

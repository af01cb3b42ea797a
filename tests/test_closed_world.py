"""harness.mutation.closed_world: the closed-world operators, on nested sources and on the toy
domain, graded by the reference checker; volatile writes are not effects.
"""

from __future__ import annotations

import ast
import textwrap

import pytest
from mutation_support import ADAPTER, CLOSED, CONTROLS, ROOT, TARGET, TOOLS, context, new_violations

import harness.mutation.enumerate as enumerate_module
import harness.mutation.sites.context as site_context_module
from harness.checker.verdicts import DefectClass
from harness.mutation.ast_operator import render
from harness.mutation.closed_world import context_writes
from harness.mutation.enumerate import enumerate_pairs
from harness.mutation.model import Arm, Pair
from harness.mutation.registry import get_operator
from harness.mutation.sites import (
    changed_statements,
    function_source,
    site_context,
)


def test_ignored_argument_rebinds_after_the_last_guard_reading_it() -> None:
    source = textwrap.dedent(
        """\
        def f(svc, name: str, owner: str, amount: int, note: str = "n"):
            if amount <= 0:
                raise ValueError("amount")
            svc.put(name, owner, amount, note)
            return name
        """
    )
    ctx = context(
        injected=frozenset({"svc"}),
        effective_arguments=frozenset({"name", "amount", "note", "svc"}),
    )
    op = get_operator("M-IGNARG")
    texts = [op.mutate(source, ctx, i) for i in range(op.occurrences(source, ctx))]
    assert len(texts) == 3
    assert texts[0].splitlines()[1] == "    name = owner"  # first other str parameter
    assert texts[1].splitlines()[3] == "    amount = 1"  # after the guard that reads it
    assert texts[2].splitlines()[1] == "    note = 'n'"  # its default


def test_render_falls_back_to_a_full_rewrite_for_one_line_blocks() -> None:
    source = "def f(x):\n    if x: raise ValueError('x')\n    return x\n"
    fn = ast.parse(source).body[0]
    fn.body[0].test = ast.UnaryOp(ast.Not(), fn.body[0].test)  # type: ignore[attr-defined]
    out = render(source, fn)  # type: ignore[arg-type]
    assert ast.dump(ast.parse(out).body[0]) == ast.dump(fn)


@pytest.mark.parametrize(
    ("operator", "tool", "site", "expected"),
    [
        ("M-PHANTOM", "transfer", "transfer", DefectClass.PHANTOM_EFFECT),
        ("M-PRECOND", "deposit", "deposit", DefectClass.UNENFORCED_PRECONDITION),
        ("M-IGNARG", "transfer", "transfer", DefectClass.IGNORED_ARGUMENT),
        ("M-PARTIAL", "transfer", "transfer", DefectClass.PARTIAL_EFFECT),
        ("M-INVAR", "reserve_item", "reserve_item", DefectClass.INVARIANT_BREAK),
        ("M-RESET", "transfer", "Bank.reset", DefectClass.RESET_LEAK),
    ],
)
def test_closed_world_mutant_is_detected_with_its_class(
    all_pairs: list[Pair], operator: str, tool: str, site: str, expected: DefectClass
) -> None:
    pairs = [
        p
        for p in all_pairs
        if p.mutant.operator == operator and p.tool == tool and p.mutant.site.qualname == site
    ]
    assert pairs, f"{operator} offers nothing on {site}"
    for pair in pairs:
        compile(pair.mutant.mutated_source, "<mutant>", "exec")
    classes = set()
    for pair in pairs:  # stop at the first mutant reported with the operator's class
        found = {defect for _, defect in new_violations(pair)}
        assert found, f"{pair.mutant.operator} #{pair.mutant.occurrence} on {tool} not detected"
        classes |= found
        if expected in classes:
            break
    assert expected in classes


def test_every_closed_world_operator_yields_mutants_on_the_toy_domain(all_pairs) -> None:
    by_operator = {name: [p for p in all_pairs if p.mutant.operator == name] for name in CLOSED}
    assert all(by_operator.values()), {k: len(v) for k, v in by_operator.items()}
    for pair in all_pairs:
        closed = pair.mutant.defect_class is not None
        assert pair.mutant.arm is (Arm.CLOSED_WORLD if closed else Arm.CONTROLS)


def _volatile_steps(fn: ast.AST) -> tuple[int, int]:
    """(calls of `_touch`, writes of `last_activity`) in a function."""
    touches = sum(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "_touch"
        for n in ast.walk(fn)
    )
    stamps = sum(
        isinstance(n, ast.Attribute) and n.attr == "last_activity" and isinstance(n.ctx, ast.Store)
        for n in ast.walk(fn)
    )
    return touches, stamps


def test_no_effect_mutant_removes_a_volatile_write(all_pairs: list[Pair]) -> None:
    effect_pairs = [
        p for p in all_pairs if p.mutant.operator in {"M-PARTIAL", "M-PHANTOM", "M-INVAR"}
    ]
    assert {p.mutant.operator for p in effect_pairs} == {"M-PARTIAL", "M-PHANTOM", "M-INVAR"}
    for pair in effect_pairs:
        original = ast.parse(function_source(pair.mutant.site, ROOT))
        mutated = ast.parse(pair.mutant.mutated_source)
        # (M-PHANTOM's copy may carry a later `bank._touch()` to `bank_copy._touch()`)
        assert _volatile_steps(mutated) == _volatile_steps(original), pair.mutant.diff
    assert not [p for p in effect_pairs if p.mutant.site.qualname == "Bank._touch"]


def _ids_by_operator(pairs: list[Pair]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for pair in pairs:
        found.setdefault(pair.mutant.operator, set()).add(pair.mutant.id)
    return found


def test_other_operators_keep_their_ids_unless_they_touched_volatile_state(
    all_pairs: list[Pair], monkeypatch
) -> None:
    """Ids as before volatile fields were known (none volatile) against ids now."""
    others = [name for name in [*CLOSED, *CONTROLS] if name != "M-RESET"]

    def nothing(adapter: object, contract: object) -> frozenset[str]:
        return frozenset()

    monkeypatch.setattr(site_context_module, "volatile_fields", nothing)  # where site_context looks
    monkeypatch.setattr(enumerate_module, "volatile_fields", nothing)
    before_pairs = enumerate_pairs(TARGET, TOOLS, others)
    monkeypatch.undo()
    before = _ids_by_operator(before_pairs)
    now = _ids_by_operator([p for p in all_pairs if p.mutant.operator != "M-RESET"])
    assert set(before) == set(now)
    for name in set(now) - {"M-PARTIAL", "M-PHANTOM"}:
        assert now[name] == before[name], name
    old = {p.mutant.id: p for p in before_pairs}
    # M-PARTIAL: only mutants disappear, those that removed a volatile write (`_touch()`) or
    # whose function has one non-volatile write left (removing it is M-PHANTOM's change)
    assert now["M-PARTIAL"] < before["M-PARTIAL"]
    for gone in before["M-PARTIAL"] - now["M-PARTIAL"]:
        pair = old[gone]
        source = function_source(pair.mutant.site, ROOT)
        context = site_context(ADAPTER, TARGET.contracts[pair.tool], pair.mutant.site, pair.tool)
        writes = {ast.dump(w.statement) for w in context_writes(ast.parse(source).body[0], context)}
        changed = changed_statements(source, pair.mutant.mutated_source) or []
        volatile_only = not writes & {ast.dump(s) for s in changed}
        assert volatile_only or len(writes) < 2, pair.mutant.diff
    # M-PHANTOM: same sites, but the text keeps `bank._touch()` (not a write any more)
    changed_phantoms = before["M-PHANTOM"] - now["M-PHANTOM"]
    assert len(changed_phantoms) == len(now["M-PHANTOM"] - before["M-PHANTOM"])
    assert {old[i].mutant.site.qualname for i in changed_phantoms} == {
        p.mutant.site.qualname
        for p in all_pairs
        if p.mutant.id in now["M-PHANTOM"] - before["M-PHANTOM"]
    }
    for gone in changed_phantoms:
        original = ast.parse(function_source(old[gone].mutant.site, ROOT))
        assert _volatile_steps(ast.parse(old[gone].mutant.mutated_source)) != _volatile_steps(
            original
        )

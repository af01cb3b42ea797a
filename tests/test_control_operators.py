"""harness.mutation.control_operators: the controls keep behaviour, and the reference checker
reports none of them.
"""

from __future__ import annotations

import multiprocessing
import textwrap
from concurrent.futures import ProcessPoolExecutor

import pytest
from mutation_support import CONTROLS, TOOLS, baseline, context, new_violations

from harness.mutation.model import Arm, Pair
from harness.mutation.registry import get_operator


def test_controls_keep_behaviour_on_an_example() -> None:
    source = textwrap.dedent(
        """\
        def f(svc, count: int, label: str):
            if count < 0:
                raise ValueError(f"bad count {count}")
            total = count + 1
            svc.total = total
            svc.count = count
            svc.label = label + "!"
            svc.twice = label + label
            return total * 2
        """
    )
    ctx = context()

    def run(text: str) -> tuple[object, dict[str, object], str]:
        namespace: dict[str, object] = {}
        exec(text, namespace)
        function = namespace["f"]
        svc = type("Svc", (), {})()
        result = function(svc, 4, "a")  # type: ignore[operator]
        with pytest.raises(ValueError) as refused:
            function(svc, -1, "a")  # type: ignore[operator]
        return result, vars(svc), type(refused.value).__name__

    expected = run(source)
    for name in CONTROLS:
        op = get_operator(name)
        assert op.occurrences(source, ctx) >= 1, name
        for occurrence in range(op.occurrences(source, ctx)):
            assert run(op.mutate(source, ctx, occurrence)) == expected, (name, occurrence)
    # `count < 0`, `count + 1` and `total * 2`; never the two string concatenations
    assert get_operator("C-COMMUTE").occurrences(source, ctx) == 3


def _control_violations(pair: Pair) -> tuple[str, list[str]]:
    return pair.id, sorted(f"{c}:{d}" for c, d in new_violations(pair))


def test_no_control_is_reported(all_pairs: list[Pair]) -> None:
    controls = [p for p in all_pairs if p.mutant.arm is Arm.CONTROLS]
    assert {p.mutant.operator for p in controls} == set(CONTROLS)
    for tool in TOOLS:
        baseline(tool)  # computed once, inherited by the forked workers
    # every control of the toy domain is checked; two forked workers keep the test short
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        results = dict(pool.map(_control_violations, controls))
    flagged = {pair_id: found for pair_id, found in results.items() if found}
    assert len(results) == len(controls)
    assert not flagged

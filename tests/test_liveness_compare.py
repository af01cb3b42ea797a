"""Issue 31, item 1: a pair's liveness observations are diffed once (`liveness.compare`)
and its live flag, kill vector and miss-cause changes derived from that one comparison.
Checked against the functions as they were before (kept here verbatim as the reference)
on real observations: every closed-world and control mutant of the toy domain applied in
memory, on each tool's seeded liveness corpus."""

from __future__ import annotations

from mutation_support import ADAPTER, CLOSED, CONTROLS, TARGET, TOOLS

from harness.execution.liveness import (
    Observation,
    build_corpus,
    compare,
    differences_of,
    kill_vector_of,
    observe,
)
from harness.execution.miss_cause import OUTCOME, RESULT, Change, changes_of
from harness.mutation.apply import applied
from harness.mutation.enumerate import enumerate_pairs
from harness.targets.equality import canonical_equal, diff


def old_differences(original: list[Observation], mutant: list[Observation]) -> list[str]:
    found: list[str] = []
    for before, after in zip(original, mutant, strict=True):
        if before["success"] != after["success"] or before["error_type"] != after["error_type"]:
            found.append("outcome")
        if not canonical_equal(before["result"], after["result"]):
            found.append("result")
        for key in ("post", "after_reset"):
            found += [f"{key}.{d.dotted()}" for d in diff(before[key], after[key], limit=20)]
    return sorted(set(found))


def old_kill_vector(original: list[Observation], mutant: list[Observation]) -> list[int]:
    return [
        index
        for index, (before, after) in enumerate(zip(original, mutant, strict=True))
        if old_differences([before], [after])
    ]


def old_call_changes(original, mutant, corpus) -> list[Change]:
    out: list[Change] = []
    for args, before, after in zip(corpus, original, mutant, strict=True):
        if before["success"] != after["success"] or before["error_type"] != after["error_type"]:
            out.append(Change(args, OUTCOME))
        if not canonical_equal(before["result"], after["result"]):
            out.append(Change(args, RESULT))
        for key in ("post", "after_reset"):
            out += [
                Change(args, path=d.path, after_reset=key == "after_reset")
                for d in diff(before[key], after[key], limit=20)
            ]
    return out


def test_one_comparison_gives_the_old_differences_kill_vector_and_changes() -> None:
    corpora = {
        tool: build_corpus(ADAPTER, TARGET.contracts[tool], seed=7, size=12) for tool in TOOLS
    }
    originals = {tool: observe(ADAPTER, tool, corpora[tool]) for tool in TOOLS}
    live = killed_some_not_all = 0
    for pair in enumerate_pairs(TARGET, TOOLS, [*CLOSED, *CONTROLS]):
        corpus, original = corpora[pair.tool], originals[pair.tool]
        with applied(ADAPTER, pair.mutant):
            mutated = observe(ADAPTER, pair.tool, corpus)
        calls = compare(original, mutated)
        assert differences_of(calls) == old_differences(original, mutated), pair.mutant.id
        assert kill_vector_of(calls) == old_kill_vector(original, mutated), pair.mutant.id
        assert changes_of(calls, corpus) == old_call_changes(original, mutated, corpus)
        assert any(calls) == bool(old_differences(original, mutated))
        live += any(calls)
        killed_some_not_all += 0 < len(kill_vector_of(calls)) < len(corpus)
    # the comparison was made on mutants that differ, and on calls that tell them apart
    assert live > 20 and killed_some_not_all > 5, (live, killed_some_not_all)

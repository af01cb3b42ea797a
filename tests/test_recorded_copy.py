"""Checker 1.3.0 probes a recorded pre-state from a copy of it when the adapter offers
`copy_environment` (tau2-telecom): the verdicts and witnesses must be those of rebuilding
the task's environment and replaying its prefix for every probe."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checker import ReferenceChecker
from harness.targets.recorded import attach_probe_half, read_corpus
from harness.targets.registry import load_target

CORPORA = Path(__file__).resolve().parent.parent / "corpora"


@pytest.fixture(scope="module")
def telecom():
    target = load_target("tau2-telecom")
    attach_probe_half(target, CORPORA, 0)
    return target


def test_a_copied_pre_state_behaves_as_the_replayed_one(telecom) -> None:
    """Every recorded telecom call, run on a copy of its pre-state and on the replayed
    pre-state, leaves the same state and returns the same outcome."""
    adapter = telecom.adapter
    corpus = read_corpus(CORPORA, "tau2-telecom")
    seen = 0
    for call in corpus.calls:
        replayed = adapter.task_environment(call.task)
        for step in call.prefix:
            adapter.invoke(replayed, step.tool, dict(step.args))
        copied = adapter.copy_environment(replayed)
        assert adapter.snapshot(copied) == adapter.snapshot(replayed)
        got = adapter.invoke(copied, call.tool, dict(call.args))
        want = adapter.invoke(replayed, call.tool, dict(call.args))
        assert (got.success, got.error_type) == (want.success, want.error_type)
        assert adapter.snapshot(copied) == adapter.snapshot(replayed)
        seen += 1
    assert seen > 100  # the whole corpus, not a slice of it


def test_the_report_is_the_same_with_and_without_copies(telecom, monkeypatch) -> None:
    checker = ReferenceChecker()
    with_copies = checker.check(telecom)
    monkeypatch.setattr(type(telecom.adapter), "copy_environment", lambda self, env: None)
    rebuilt = checker.check(telecom)
    strip = {"probes_run"}
    assert [t.model_dump(exclude=strip) for t in with_copies.tools] == [
        t.model_dump(exclude=strip) for t in rebuilt.tools
    ]
    # the copies save prefix replays: fewer tool calls for the same verdicts
    assert sum(t.probes_run for t in with_copies.tools) < sum(t.probes_run for t in rebuilt.tools)


def test_airline_and_retail_rebuild_instead_of_copying() -> None:
    for name in ("tau2-airline", "tau2-retail"):
        adapter = load_target(name).adapter
        assert adapter.copy_environment(adapter.fresh()) is None

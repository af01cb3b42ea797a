"""Recorded-call corpora: replay, the committed files, and the two halves that never meet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.targets.adapter import TaskAdapter
from harness.targets.recorded import (
    HALVES,
    TargetCorpus,
    half_calls,
    pre_state,
    read_corpus,
    record,
    split_tasks,
    state_hash,
)
from harness.targets.registry import load_target
from harness.targets.toy import ToyAdapter

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
COMMITTED = sorted(CORPORA.glob("*.json"))


def test_toy_replay_is_the_committed_corpus_byte_for_byte(tmp_path: Path) -> None:
    from harness.targets.recorded import write_corpus

    target = load_target("toy_domain")
    path = write_corpus(tmp_path, record(target.adapter, target.contracts))
    assert path.read_bytes() == (CORPORA / "toy_domain.json").read_bytes()


def test_toy_corpus_records_only_state_changing_tools_with_their_prefixes() -> None:
    corpus = read_corpus(CORPORA, "toy_domain")
    assert corpus.state_changing_tools == ["deposit", "transfer"]
    assert corpus.counts["deposit"] == 2 and corpus.counts["transfer"] == 7
    assert corpus.counts["get_balance"] == 0  # read-only: audit_unchanged's call is not recorded
    refund = [c for c in corpus.calls if c.task == "refund_noted"]
    assert [(c.step, c.tool) for c in refund] == [(0, "deposit"), (1, "transfer")]
    assert [p.tool for p in refund[1].prefix] == ["deposit"]
    assert "get_balance" in corpus.tools_without_calls


def test_a_prefix_reproduces_the_recorded_pre_state() -> None:
    adapter = ToyAdapter()
    corpus = read_corpus(CORPORA, "toy_domain")
    for call in corpus.calls:
        from harness.targets.equality import mask_state, parse_pattern

        masks = [parse_pattern(p) for p in adapter.volatile_paths()]
        state = mask_state(adapter.snapshot(pre_state(adapter, call)), masks)
        assert state_hash(state) == call.pre_state_sha256, (call.task, call.step)
    # and a wrong prefix does not: the hash tells states apart
    second = next(c for c in corpus.calls if c.task == "refund_noted" and c.step == 1)
    first = next(c for c in corpus.calls if c.task == "refund_noted" and c.step == 0)
    assert second.pre_state_sha256 != first.pre_state_sha256


@pytest.mark.parametrize("path", COMMITTED, ids=[p.stem for p in COMMITTED])
def test_no_task_is_in_both_halves(path: Path) -> None:
    corpus = TargetCorpus.model_validate_json(path.read_text(encoding="utf-8"))
    for seed in (0, 1, 20261130):
        halves = split_tasks(corpus.tasks, seed, corpus.target)
        liveness, probe = set(halves["liveness"]), set(halves["probe"])
        assert not liveness & probe
        assert liveness | probe == set(corpus.tasks)
        assert len(liveness) - len(probe) in (0, 1)
        by_half = {half: half_calls(corpus, seed, half) for half in HALVES}
        tasks_of = {
            half: {c.task for calls in by_half[half].values() for c in calls} for half in HALVES
        }
        assert not tasks_of["liveness"] & tasks_of["probe"]
        assert tasks_of["liveness"] <= liveness and tasks_of["probe"] <= probe


def test_the_split_depends_on_the_seed_and_not_on_the_task_order() -> None:
    tasks = [f"t{i}" for i in range(20)]
    assert split_tasks(tasks, 3, "x") == split_tasks(list(reversed(tasks)), 3, "x")
    assert split_tasks(tasks, 3, "x") != split_tasks(tasks, 4, "x")


def test_committed_corpora_count_what_they_hold() -> None:
    assert {p.stem for p in COMMITTED} >= {"toy_domain", "tau2-airline", "agentdojo-banking"}
    for path in COMMITTED:
        corpus = TargetCorpus.model_validate_json(path.read_text(encoding="utf-8"))
        assert sum(corpus.counts.values()) == len(corpus.calls)
        assert {c.tool for c in corpus.calls} == set(corpus.state_changing_tools)
        assert all(corpus.counts.get(t, 0) == 0 for t in corpus.tools_without_calls)
        assert json.loads(path.read_text())["target"] == path.stem


def test_a_target_without_tasks_is_a_user_error() -> None:
    class NoTasks(ToyAdapter):
        task_ids = None  # type: ignore[assignment]

    adapter = NoTasks()
    assert not isinstance(adapter, TaskAdapter)
    with pytest.raises(UserError, match="TaskAdapter"):
        record(adapter, [])

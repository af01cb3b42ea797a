"""The local executor's spare: one pair child forked ahead of its pair (executors.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_runner import harness, project

from harness.execution import executors
from harness.execution.coverage import Reuse
from harness.execution.draw import load_corpus
from harness.execution.isolation import children_of
from harness.execution.ledger import PairScore, PairStatus
from harness.execution.pair_scoring import PairOutcome, complete_context, new_context
from harness.execution.plan import load_plan


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """A drawn toy plan's context, its first four pairs, and their rows scored with one
    worker by the executor as it is."""
    root = project(tmp_path_factory.mktemp("spare"))
    assert harness("draw", "plans/small.yaml", cwd=root).returncode == 0
    plan = load_plan(root / "plans" / "small.yaml")
    corpus = load_corpus(root, plan)
    pairs = corpus.pairs[:4]
    ctx = new_context(plan, "f", False, corpus.liveness, corpus)
    complete_context(ctx, pairs, None)
    outcomes: list[PairOutcome] = []
    executors.score_pairs(ctx, pairs, 1, outcomes.append)
    return ctx, pairs, {o.pair_id: o.score for o in outcomes}


def test_every_pair_is_scored_once_and_no_child_outlives_the_run(scored) -> None:
    ctx, pairs, rows = scored
    assert sorted(rows) == sorted(p.pair_id for p in pairs)
    outcomes: list[PairOutcome] = []
    executors.score_pairs(ctx, pairs, 2, outcomes.append)
    assert {o.pair_id: o.score for o in outcomes} == rows  # any worker count, same rows
    assert children_of(os.getpid()) == []


def test_a_spare_killed_before_its_pair_arrives_is_replaced_and_the_row_is_the_same(
    scored, monkeypatch
) -> None:
    """Every second child is killed as soon as it is forked (before any pair reaches it):
    the executor forks another for that pair, and every row is what it was."""
    ctx, pairs, rows = scored
    started = executors._FORK.Process.start
    forks: list[int] = []

    def start_and_kill_every_second(process) -> None:
        started(process)
        forks.append(process.pid)
        if len(forks) % 2 == 0:
            process.kill()
            os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped

    monkeypatch.setattr(executors._FORK.Process, "start", start_and_kill_every_second)
    outcomes: list[PairOutcome] = []
    executors.score_pairs(ctx, pairs, 1, outcomes.append)
    assert {o.pair_id: o.score for o in outcomes} == rows
    assert len(forks) > len(pairs)  # the killed ones were replaced
    assert children_of(os.getpid()) == []


def test_a_run_stopped_between_pairs_ends_its_spare_too(scored) -> None:
    """A stop raised while the first row is recorded (where Ctrl-C lands in the runner):
    the child scoring nothing yet, forked ahead for the next pair, is ended with the rest."""
    ctx, pairs, _ = scored

    def stop(outcome: PairOutcome) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        executors.score_pairs(ctx, pairs, 1, stop)
    assert children_of(os.getpid()) == []


def test_a_spare_that_no_pair_reaches_exits_without_answering(tmp_path: Path) -> None:
    """`_child` reading end-of-file instead of a pair exits 0 and sends nothing."""
    plan = load_plan(project(tmp_path) / "plans" / "small.yaml")
    ctx = new_context(plan, "f", False, {}, None)
    jobs_in, jobs = executors._FORK.Pipe(duplex=False)
    answer, send = executors._FORK.Pipe(duplex=False)
    process = executors._FORK.Process(
        target=executors._child, args=(ctx, jobs_in, send, os.getpid(), [jobs, answer]), daemon=True
    )
    process.start()
    jobs_in.close()
    send.close()
    jobs.close()  # no pair will come
    process.join(10)
    assert process.exitcode == 0
    with pytest.raises(EOFError):  # nothing was sent before the end of file
        answer.recv()


def test_a_pair_scored_here_is_scored_before_the_next_pair_child_is_forked(
    scored, monkeypatch
) -> None:
    """The second of three pairs is scored in this process (`score_unexecuted`, which
    defines its mutant here) and leaves a mark; the third pair's child must see it whatever
    the worker count, as a child forked just for it would. A spare forked while the first
    pair was scored, before the second was reached, would not, with one worker only."""
    ctx, pairs, _ = scored
    first, here, third = pairs[:3]
    marks: list[str] = []

    def scored_here(ctx, pair) -> PairScore:
        marks.append(pair.pair_id)
        return PairScore(status=PairStatus.INFRA_ERROR, error="scored here")

    def scored_in_child(ctx, pair) -> PairScore:
        return PairScore(status=PairStatus.INFRA_ERROR, error=f"saw {len(marks)} marks")

    monkeypatch.setattr(executors, "score_unexecuted", scored_here)
    monkeypatch.setattr(executors, "score_pair", scored_in_child)
    monkeypatch.setitem(ctx.reuse, here.pair_id, Reuse(0, 0, frozenset(), True))
    for workers in (1, 2):
        marks.clear()
        outcomes: list[PairOutcome] = []
        executors.score_pairs(ctx, [first, here, third], workers, outcomes.append)
        errors = {o.pair_id: o.score.error for o in outcomes}
        assert errors == {
            first.pair_id: "saw 0 marks",
            here.pair_id: "scored here",
            third.pair_id: "saw 1 marks",
        }, workers
    assert children_of(os.getpid()) == []

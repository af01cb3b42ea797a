"""A plan's recorded calls: the liveness half in the liveness corpus, the probe half with the
checker, both drawn into the corpus and the corpora hashed by the freeze. Hand-made mutants
and hand-written corpora only (no drawn pool is run here)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from test_recorded_probes import DROPS_REFUND
from test_runner import hand_mutant

from harness.execution.draw import Corpus, write_corpus
from harness.execution.freeze import current_inputs, freeze, verify
from harness.execution.liveness import differences, observe, recorded_call
from harness.execution.miss_cause import call_changes
from harness.execution.pair_scoring import new_context
from harness.execution.plan import Plan, load_plan
from harness.execution.recorded_calls import corpus_split, drawn_halves
from harness.mutation.apply import applied
from harness.mutation.sites import tool_sites
from harness.targets.recorded import RecordedCall, read_corpus, split_tasks
from harness.targets.registry import load_target

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
PLAN = """
schema_version: 1
name: recorded
description: a plan with recorded calls
seed: 7
arms:
  - name: closed_world
    kind: closed_world
    target: toy_domain
    tools: [transfer, deposit]
    operators: [M-IGNARG]
    draw_per_operator: 1
recorded_calls:
  split_seed: {seed}
"""


def _project(tmp_path: Path, seed: int = 3) -> Path:
    root = tmp_path / "project"
    (root / "plans").mkdir(parents=True)
    (root / "corpora").mkdir()
    shutil.copy(CORPORA / "toy_domain.json", root / "corpora" / "toy_domain.json")
    (root / "plans" / "recorded.yaml").write_text(PLAN.format(seed=seed))
    return root


def _plan(root: Path) -> Plan:
    return load_plan(root / "plans" / "recorded.yaml")


def test_the_drawn_halves_come_from_tasks_that_never_meet(tmp_path: Path) -> None:
    root = _project(tmp_path)
    plan = _plan(root)
    toy = load_target("toy_domain")
    liveness, probes = drawn_halves(plan, root, [toy], {"toy_domain": ["transfer", "deposit"]})
    live_calls = [c for calls in liveness["toy_domain"].values() for c in calls]
    live_tasks = {c["@recorded"]["task"] for c in live_calls}
    probe_tasks = {c["task"] for calls in probes["toy_domain"].values() for c in calls}
    halves = split_tasks(read_corpus(root / "corpora", "toy_domain").tasks, 3, "toy_domain")
    assert live_tasks and probe_tasks and not live_tasks & probe_tasks
    assert live_tasks <= set(halves["liveness"]) and probe_tasks <= set(halves["probe"])
    assert corpus_split(plan, root) == {"toy_domain": halves}
    # only the tools the drawn pairs touch
    only, _ = drawn_halves(plan, root, [toy], {"toy_domain": ["deposit"]})
    assert set(only["toy_domain"]) <= {"deposit"}


def test_a_missing_corpus_for_a_target_with_tasks_is_a_user_error(tmp_path: Path) -> None:
    from harness.errors import UserError

    root = _project(tmp_path)
    (root / "corpora" / "toy_domain.json").unlink()
    with pytest.raises(UserError, match="harness corpus record toy_domain"):
        drawn_halves(_plan(root), root, [load_target("toy_domain")], {"toy_domain": ["deposit"]})


def test_a_recorded_liveness_call_runs_from_its_pre_state_and_reports_its_arguments() -> None:
    toy = load_target("toy_domain")
    corpus = read_corpus(CORPORA, "toy_domain")
    refund = next(c for c in corpus.calls if c.task == "refund_noted" and c.tool == "transfer")
    calls = [recorded_call(refund)]
    original = observe(toy.adapter, "transfer", calls)
    assert original[0]["success"] is True
    assert original[0]["post"]["bank"]["transfers"][-1]["memo"] == "refund"
    site = next(s for s in tool_sites(toy.adapter, "transfer") if s.qualname == "transfer")
    mutant = hand_mutant(toy.adapter, site, "TEST", textwrap.dedent(DROPS_REFUND).lstrip())
    with applied(toy.adapter, mutant):
        mutated = observe(toy.adapter, "transfer", calls)
    assert any(d.startswith("post.bank.transfers") for d in differences(original, mutated))
    changes = call_changes(original, mutated, calls)
    assert changes and all(c.args == refund.args for c in changes)


def test_the_run_context_gives_the_checker_the_drawn_probe_half(tmp_path: Path) -> None:
    root = _project(tmp_path)
    plan = _plan(root)
    _, probes = drawn_halves(plan, root, [load_target("toy_domain")], {"toy_domain": ["transfer"]})
    corpus = Corpus(plan=plan.name, seed=7, pairs=[], liveness={}, recorded_probes=probes)
    ctx = new_context(plan, "f", False, {}, corpus)
    recorded = ctx.targets["toy_domain"].recorded["transfer"]
    assert recorded and all(isinstance(c, RecordedCall) for c in recorded)
    assert [c.model_dump(mode="json") for c in recorded] == probes["toy_domain"]["transfer"]
    # a Dask worker, given the liveness and the recorded calls but no corpus, sees the same
    worker = new_context(plan, "f", False, {}, None, None, probes)
    assert worker.targets["toy_domain"].recorded == ctx.targets["toy_domain"].recorded


def test_the_freeze_hashes_the_corpora_and_notices_a_re_recorded_one(tmp_path: Path) -> None:
    root = _project(tmp_path)
    plan = _plan(root)
    plan_path = root / "plans" / "recorded.yaml"
    drawn = root / "mutants" / "recorded"
    drawn.parent.mkdir(parents=True)
    write_corpus(drawn, plan, [], Corpus(plan=plan.name, seed=7, pairs=[], liveness={}))
    assert "recorded_probes" not in json.loads((drawn / "manifest.json").read_text())
    hashes, _ = current_inputs(plan_path, plan, root)
    assert list(hashes["corpora"]) == ["corpora/toy_domain.json"]
    from harness.execution.freeze import freeze

    record = freeze(plan_path, plan, root, [])
    assert record.corpus_split == corpus_split(plan, root)
    assert verify(plan_path, plan, root)[1] == []
    path = root / "corpora" / "toy_domain.json"
    path.write_text(path.read_text().replace('"gift"', '"GIFT"'))
    problems = verify(plan_path, plan, root)[1]
    assert [(p.file, p.where) for p in problems] == [("corpora/toy_domain.json", "corpora")]


def _hand_corpus(root: Path) -> None:
    """The plan's corpus by hand: one pair, DROPS_REFUND on transfer (no drawn mutant)."""
    from harness.execution.draw import DrawnPair

    plan = _plan(root)
    toy = load_target("toy_domain")
    site = next(s for s in tool_sites(toy.adapter, "transfer") if s.qualname == "transfer")
    mutant = hand_mutant(toy.adapter, site, "TEST", textwrap.dedent(DROPS_REFUND).lstrip())
    pair = DrawnPair(
        pair_id=f"{mutant.id}:transfer", arm="closed_world", tool="transfer", mutant=mutant
    )
    liveness, probes = drawn_halves(plan, root, [toy], {"toy_domain": ["transfer"]})
    corpus = Corpus(
        plan=plan.name,
        seed=plan.seed,
        pairs=[pair],
        liveness=liveness,
        recorded_probes=probes,
    )
    (root / "mutants").mkdir(exist_ok=True)
    write_corpus(root / "mutants" / plan.name, plan, [], corpus)
    freeze(root / "plans" / "recorded.yaml", plan, root, [pair.pair_id])


@pytest.mark.parametrize(
    ("seed", "status", "live", "cause"),
    [
        # refund_noted in the probe half: the checker reaches the state, while no liveness
        # call (only the other half's, here) asks for that memo
        (3, "detected", False, None),
        # in the liveness half: live there, and no checker probe reveals it
        (0, "missed", True, "probe_unrevealing"),
    ],
)
def test_a_run_scores_the_halves_as_the_ledger_docs_say(
    tmp_path, seed, status, live, cause
) -> None:
    from test_runner import harness, ledger

    root = _project(tmp_path, seed=seed)
    _hand_corpus(root)
    done = harness("run", "plans/recorded.yaml", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = ledger(root, "recorded")
    assert row.status.value == status
    assert row.live is live
    assert (row.miss_cause.value if row.miss_cause else None) == cause


def test_liveness_per_tool_caps_the_liveness_half_by_a_seeded_choice(tmp_path: Path) -> None:
    root = _project(tmp_path, seed=0)
    path = root / "plans" / "recorded.yaml"
    path.write_text(path.read_text() + "  liveness_per_tool: 2\n")
    plan = _plan(root)
    toy = load_target("toy_domain")
    capped, _ = drawn_halves(plan, root, [toy], {"toy_domain": ["transfer"]})
    path.write_text(path.read_text().replace("  liveness_per_tool: 2\n", ""))
    whole, _ = drawn_halves(_plan(root), root, [toy], {"toy_domain": ["transfer"]})
    assert len(whole["toy_domain"]["transfer"]) > 2
    assert len(capped["toy_domain"]["transfer"]) == 2
    assert all(c in whole["toy_domain"]["transfer"] for c in capped["toy_domain"]["transfer"])
    steps = [
        (c["@recorded"]["task"], c["@recorded"]["step"]) for c in capped["toy_domain"]["transfer"]
    ]
    assert steps == sorted(steps)  # kept in (task, step) order


def test_corpora_outside_the_project_are_refused(tmp_path: Path) -> None:
    from harness.errors import UserError

    root = _project(tmp_path)
    path = root / "plans" / "recorded.yaml"
    path.write_text(
        path.read_text().replace("  split_seed:", "  corpora: ../elsewhere\n  split_seed:")
    )
    with pytest.raises(UserError, match=r"recorded_calls\.corpora"):
        corpus_split(_plan(root), root)

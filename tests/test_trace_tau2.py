"""Score at risk (`harness trace`) on tau2-bench: the port's scorers read statically, the
baseline's defects traced to the tasks (harness/trace/tau2_tasks.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_evals.tau2")

from harness.targets.registry import load_target
from harness.trace.readsites import Evaluator, SiteKind, read_sites
from harness.trace.suites import suite_for
from harness.trace.tau2_tasks import Tau2Tasks, _anchor

ROOT = Path(__file__).resolve().parent.parent
REFUEL_TASK = "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("trace") / "out"
    done = harness(
        "trace", "tau2-airline", "tau2-telecom", "--from", "results/tau2-baseline",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def rows(out: Path) -> list[dict[str, Any]]:
    return jsonl(out / "trace.jsonl")


def test_send_certificate_is_exposed_only_through_the_whole_database_hash(rows):
    mine = [r for r in rows if r["tool"] == "send_certificate"]
    assert len(mine) == 50  # every airline task of the base split
    assert {r["basis"] for r in mine} == {"whole_state_hash"}
    assert {s["where"] for r in mine for s in r["matched_sites"]} == {
        _anchor("db_match")[0]  # the get_hash comparison in the installed port
    }
    gold = sorted(r["task"] for r in mine if r["gold_call"])
    assert gold == ["2", "27", "38"]
    # the gold amounts are ints stored as floats: the type-strict effect fails on every one
    assert all(
        r["reached"] and r["reaching_clauses"] == ["eff.amount"] for r in mine if r["gold_call"]
    )
    assert all(r["reached"] is None for r in mine if not r["gold_call"])
    # tasks with communicate_info also read the agent's messages
    grounding = {r["task"]: r["grounding"] for r in mine}
    informed = {
        t for t, task in Tau2Tasks(load_target("tau2-airline").adapter)._tasks().items()
        if task.evaluation_criteria.communicate_info
    }  # fmt: skip
    assert informed and {t for t, g in grounding.items() if g == "mixed"} == informed
    assert set(grounding.values()) == {"mixed", "state_grounded"}


def test_refuel_data_is_read_exactly_by_the_refuelling_assertion(rows):
    mine = {r["task"]: r for r in rows if r["tool"] == "refuel_data"}
    row = mine[REFUEL_TASK]
    assert row["basis"] == "exact_field" and row["by_clause"] == {"pre.active": "exact_field"}
    assert row["grounding"] == "state_grounded"  # reward basis ENV_ASSERTION only
    assert {"path": "agent.lines.*.data_refueling_gb",
            "where": "TelecomAgentTools.assert_data_refueling_amount:716"} in [
        {k: s[k] for k in ("path", "where")} for s in row["matched_sites"]
    ]  # fmt: skip
    # the gold path refuels an active line: the unenforced precondition is never reached
    assert row["gold_call"] is True and row["reached"] is False
    gold = [r for r in mine.values() if r["gold_call"]]
    assert len(gold) == 50 and not any(r["reached"] for r in gold)
    # a telecom task whose assertions do not touch lines or bills is not exposed
    assert any(r["basis"] == "not_exposed" and not r["gold_call"] for r in mine.values())
    assert not any(r["unresolved_sites"] for r in mine.values())


def test_the_scorer_counts_as_the_first_hop():
    """assert_internet_speed -> _run_speed_test -> _get_mobile_data_working is three hops
    with the scorer as the first; one caller more puts the last helper out of reach."""
    target = load_target("tau2-telecom")
    source = suite_for(target)
    live = source.live_state()
    method = vars(target.adapter._data.classes["user"])["assert_internet_speed"]
    _, scorer = _anchor("env_assertions")

    def sites(callers: tuple[Any, ...]) -> list[Any]:
        evaluator = Evaluator(
            method, frozenset(), frozenset(), roots=(("self", ("user",)),), callers=callers
        )
        return read_sites([evaluator], live)

    three = sites((scorer,))
    assert not [s for s in three if s.kind is SiteKind.UNRESOLVED]
    assert ("user", "device", "airplane_mode") in {s.path for s in three}
    four = sites((scorer, scorer))
    unresolved = [s for s in four if s.kind is SiteKind.UNRESOLVED]
    assert unresolved and all("calls deep (limit 3)" in s.note for s in unresolved)
    assert ("user", "device", "airplane_mode") not in {s.path for s in four}


def test_the_shipped_verdict_of_a_gold_path_and_of_a_path_without_it():
    source = suite_for(load_target("tau2-telecom"))
    gold = source.gold_calls(REFUEL_TASK)
    assert source.run(REFUEL_TASK, gold).verdict is True
    without = [c for c in gold if c.tool != "refuel_data"]
    assert len(without) < len(gold)
    assert source.run(REFUEL_TASK, without).verdict is False  # the refuelling assertion fails


def test_refuel_data_repair_and_its_positive_control(out):
    (repair,) = jsonl(out / "repairs.jsonl")
    assert (repair["status"], repair["tool"], repair["still_violated"]) == (
        "validated", "refuel_data", []
    )  # fmt: skip
    controls = jsonl(out / "controls.jsonl")
    assert len(controls) == 50 and all(c["state_changed"] for c in controls)
    # the independent verdict (pre.active on the path) fails every defective path, holds repaired
    assert not any(c["unrepaired"]["independent_pass"] for c in controls)
    assert all(c["repaired"]["independent_pass"] for c in controls)
    # the shipped assertions pass some paths that refuel a suspended line, and fail them once
    # the tool refuses: the score rewards the defect there
    rewarded = [c for c in controls if c["unrepaired"]["shipped_pass"]]
    assert rewarded and all(not c["repaired"]["shipped_pass"] for c in rewarded)
    assert all(c["verdict_changed"] == c["unrepaired"]["shipped_pass"] for c in controls)

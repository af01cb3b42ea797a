"""Score at risk (`harness trace`) on the toy task suite, whose answers are known by
construction (toy_domain/tasks.py, toy_domain/legacy.py), and one AgentDojo evaluator."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.contracts.predicate import compile_predicate
from harness.targets.registry import load_target
from harness.trace.basis import Basis, Grounding, basis_of, grounding_of, matching_sites
from harness.trace.fields import defect_fields
from harness.trace.readsites import MAX_HOPS, Evaluator, SiteKind, read_sites
from toy_domain.environment import fresh_environment
from toy_domain.tasks import TASKS

ROOT = Path(__file__).resolve().parent.parent
LEGACY = "toy_domain.legacy:LegacyToyAdapter"
TOY_REPAIRS = ROOT / "toy_domain" / "repairs"

# The basis of each toy task for the legacy transfer's memo defect (toy_domain/tasks.py).
EXPECTED = {
    "pay_rent": (Basis.EXACT_FIELD, Grounding.STATE),
    "count_transfers": (Basis.COLLECTION_ONLY, Grounding.STATE),
    "audit_unchanged": (Basis.WHOLE_STATE_HASH, Grounding.STATE),
    "trust_message": (Basis.NOT_EXPOSED, Grounding.TRANSCRIPT),
    "refund_noted": (Basis.EXACT_FIELD, Grounding.MIXED),
    "plain_transfer": (Basis.EXACT_FIELD, Grounding.STATE),
    "three_hops": (Basis.EXACT_FIELD, Grounding.STATE),
    "four_hops": (Basis.UNRESOLVED, Grounding.STATE),
    "balance_only": (Basis.NOT_EXPOSED, Grounding.STATE),
}


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def toy_sites(utility: Any) -> list[Any]:
    evaluator = Evaluator(utility, frozenset({"pre", "post"}), frozenset({"transcript"}))
    return read_sites([evaluator], fresh_environment())


# --- defect -> fields ------------------------------------------------------------------


def test_bound_paths_resolve_comprehension_names():
    predicate = compile_predicate(
        "sum(l.data_gb for l in post.lines if l.active) == 3 "
        "and [t for t in post.x if t.id == args.id][0].y == 1 "
        "and all(v.on for k, v in post.m.items())"
    )
    post = {segments for root, segments in predicate.bound_paths_read if root == "post"}
    assert ("lines", "*", "data_gb") in post
    assert ("lines", "*", "active") in post
    assert ("x", "*", "y") in post  # an index into a comprehension is one of its elements
    assert ("m", "*", "on") in post
    assert ("x", "*", "id") in post
    # the plain read set cannot name them: comprehension variables are not roots
    assert ("lines", "*", "data_gb") not in {s for _, s in predicate.paths_read}


def test_defect_fields_from_compiled_predicates():
    target = load_target(LEGACY)
    contract = target.contracts["transfer"]
    record = defect_fields(contract, "eff.record_fields", None)
    assert ("bank", "transfers", "*", "memo") in record
    # an ignored argument: the effects that read args.memo
    assert ("bank", "transfers", "*", "memo") in defect_fields(contract, "arg.memo", None)
    # a precondition: the write paths of the witness's state diff, indexes as `*`
    witness = {"state_diff": [{"path": "bank.transfers.2", "before": None, "after": {}}]}
    assert defect_fields(contract, "pre.positive_amount", witness) == [("bank", "transfers", "*")]


# --- field -> evaluator -> task ----------------------------------------------------------


def test_toy_tasks_basis_and_grounding_by_construction():
    contract = load_target(LEGACY).contracts["transfer"]
    fields = defect_fields(contract, "arg.memo", None)
    got = {}
    for task in TASKS:
        sites = toy_sites(task.utility)
        got[task.id] = (basis_of(matching_sites(fields, sites)), grounding_of(sites))
    assert got == EXPECTED


def test_string_constant_path_and_three_hop_limit():
    by_id = {task.id: task for task in TASKS}
    plain = toy_sites(by_id["plain_transfer"].utility)
    assert [s.dotted() for s in plain if s.kind is SiteKind.STATE] == ["bank.transfers.*.memo"]
    three = toy_sites(by_id["three_hops"].utility)
    assert [(s.kind, s.dotted()) for s in three] == [(SiteKind.STATE, "bank.transfers.*.memo")]
    four = toy_sites(by_id["four_hops"].utility)
    assert [s.kind for s in four] == [SiteKind.UNRESOLVED]
    assert f"limit {MAX_HOPS}" in four[0].note and "_deep_four" in four[0].note


def _computed(transcript: list[str], pre: Any, post: Any) -> bool:
    name = "transfers"
    return len(getattr(post.bank, name)) > 0


def _external(transcript: list[str], pre: Any, post: Any) -> bool:
    return bool(json.dumps(post.bank.accounts, default=str))


def _whole_object(transcript: list[str], pre: Any, post: Any) -> bool:
    return post.bank.transfers == pre.bank.transfers


@pytest.mark.parametrize(
    ("utility", "note"),
    [
        (_computed, "computed attribute access"),
        (_external, "state object handed to json.dumps"),
        (_whole_object, "whole-object comparison of bank.transfers"),
    ],
)
def test_unresolvable_reads_force_the_task_in(utility, note):
    sites = toy_sites(utility)
    unresolved = [s for s in sites if s.kind is SiteKind.UNRESOLVED]
    assert unresolved and unresolved[0].note.startswith(note)
    # the fallback exposes the task even for a field it never names
    assert basis_of(matching_sites([("inventory", "items", "*", "stock")], sites)) is (
        Basis.UNRESOLVED
    )


# --- end to end: baseline -> trace, repairs, positive controls -----------------------------


def trace_legacy(baseline: Path, out: Path, repairs: Path) -> subprocess.CompletedProcess[str]:
    """`harness trace` of the legacy toy plan from `baseline`, with the repairs under
    `repairs`."""
    return harness(
        "trace", LEGACY, "--from", str(baseline), "--out", str(out), "--repairs", str(repairs)
    )  # fmt: skip


@pytest.fixture(scope="module")
def toy_baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("trace") / "baseline"
    done = harness("baseline", LEGACY, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_trace_end_to_end_on_the_toy_defect(toy_baseline: Path, tmp_path: Path):
    out = tmp_path / "risk"
    done = trace_legacy(toy_baseline, out, TOY_REPAIRS)
    assert done.returncode == 0, done.stderr
    assert "trace:" in done.stderr  # progress
    rows = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    assert {r["task"]: (r["basis"], r["grounding"]) for r in rows} == {
        task: (basis.value, grounding.value) for task, (basis, grounding) in EXPECTED.items()
    }
    reach = {r["task"]: r["reached"] for r in rows}
    assert reach["pay_rent"] is True  # a memo given: the legacy tool drops it
    assert reach["plain_transfer"] is False  # no memo given: nothing to drop
    assert reach["balance_only"] is None  # no gold call of transfer
    controls = {
        json.loads(line)["task"]: json.loads(line)
        for line in (out / "controls.jsonl").read_text().splitlines()
    }
    plain = controls["plain_transfer"]
    assert plain["unrepaired"] == {"shipped_pass": True, "independent_pass": False}
    assert plain["repaired"] == {"shipped_pass": False, "independent_pass": True}
    assert plain["verdict_changed"] and plain["state_changed"]
    assert controls["pay_rent"]["unrepaired"]["shipped_pass"] is False  # noticed
    for suffix in ("md", "tex", "csv"):
        for name in ("score_at_risk", "score_at_risk_unresolved", "score_at_risk_controls"):
            assert (out / "tables" / f"{name}.{suffix}").is_file()
    unresolved = (out / "tables" / "score_at_risk_unresolved.md").read_text()
    assert "four_hops" in unresolved and "limit 3" in unresolved
    assert "\\newcommand" in (out / "macros.tex").read_text()


def test_a_repair_that_does_not_repair_is_refused(toy_baseline: Path, tmp_path: Path):
    repairs = tmp_path / "repairs" / "toy_domain"
    repairs.mkdir(parents=True)
    good = TOY_REPAIRS / "toy_domain" / "legacy_transfer_memo.diff"
    # the same hunk, but the memo still never reaches the record
    (repairs / "no_fix.diff").write_text(
        good.read_text().replace("amount, memo)", 'amount, "" or "")')
    )
    shutil.copy(good.with_suffix(".yaml"), repairs / "no_fix.yaml")
    out = tmp_path / "risk"
    done = trace_legacy(toy_baseline, out, tmp_path / "repairs")
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert "no_fix.diff" in errors[0] and "does not repair" in errors[0]
    assert not out.exists()  # nothing half-written


@pytest.mark.parametrize(
    ("spec", "says"),
    [  # `tool` missing and `clauses` empty; `text` written twice (the last would have won)
        ("clauses: []\ntext: one\n", ["bad.yaml: tool: ", "bad.yaml: clauses: "]),
        (
            "tool: transfer\nclauses: [arg.memo]\ntext: a\ntext: b\n",
            ["bad.yaml: line 4: key 'text' written twice"],
        ),
        (  # a repair spec has no schema command: the fix must not name the contracts'
            "tool: transfer\nclauses: [arg.memo]\ntext: [a]\n",
            ["bad.yaml: text: Input should be a valid string; fix: write a string (the docs"],
        ),
    ],
)
def test_a_repair_spec_names_each_bad_field_in_one_line(
    toy_baseline: Path, tmp_path: Path, spec: str, says: list[str]
):
    repairs = tmp_path / "repairs" / "toy_domain"
    repairs.mkdir(parents=True)
    shutil.copy(TOY_REPAIRS / "toy_domain" / "legacy_transfer_memo.diff", repairs / "bad.diff")
    (repairs / "bad.yaml").write_text(spec)
    out = tmp_path / "risk"
    done = trace_legacy(toy_baseline, out, tmp_path / "repairs")
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == len(says) and "Traceback" not in done.stderr, done.stderr
    assert all(any(s in e for e in errors) for s in says), errors
    assert not out.exists()


def test_bad_source_is_one_line_error(tmp_path: Path):
    done = harness("trace", LEGACY, "--from", str(tmp_path), "--out", str(tmp_path / "o"))
    assert done.returncode == 2
    assert done.stderr.count("error:") == 1 and "tools.jsonl" in done.stderr


# --- AgentDojo: the shipped evaluators ------------------------------------------------------


def test_agentdojo_helper_and_lambda_resolve():
    from harness.trace.suites import suite_for

    tasks = suite_for(load_target("agentdojo-banking"))
    sites = read_sites(tasks.evaluators("user_task_2"), tasks.live_state())
    state = {s.dotted() for s in sites if s.kind is SiteKind.STATE}
    # find_element(post.bank_account.scheduled_transactions, lambda t: "rent" in t.subject...)
    assert "bank_account.scheduled_transactions.*.subject" in state
    assert "bank_account.scheduled_transactions.*.amount" in state
    transcript_only = read_sites(tasks.evaluators("user_task_1"), tasks.live_state())
    assert grounding_of(transcript_only) is Grounding.TRANSCRIPT


def test_trace_from_a_run_folder(tmp_path: Path):
    # the published run of the current freeze: its pairs are those of the drawn corpus
    freeze_id = json.loads((ROOT / "plans" / "closed_world.freeze.json").read_text())["freeze_id"]
    run = ROOT / "results" / "reference" / "closed_world" / freeze_id
    if not (run / "run.json").is_file():
        pytest.skip("the current freeze has no published run yet")
    out = tmp_path / "risk"
    done = harness("trace", "toy_domain", "--from", str(run), "--out", str(out), "--no-controls")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    assert rows and all(r["mutant_id"] for r in rows)
    freeze = json.loads((run / "run.json").read_text())["freeze_id"]
    assert f"(freeze {freeze})" in (out / "tables" / "score_at_risk.md").read_text()


def _enumerated(transcript: list[str], pre: Any, post: Any) -> bool:
    return any(t.memo for _, t in enumerate(post.bank.transfers))


def _empty_collection(transcript: list[str], pre: Any, post: Any) -> bool:
    # the seed state has no reservation element to show whether `.sku` is a value; the
    # subscript shape is what the extractor is tested on
    return bool(json.dumps([r.sku for r in post.inventory.reservations.values()][0]))  # noqa: RUF015


def test_enumerate_binds_elements_and_unknown_types_stay_unresolved():
    reads = {s.dotted() for s in toy_sites(_enumerated) if s.kind is SiteKind.STATE}
    assert "bank.transfers.*.memo" in reads
    env = fresh_environment()
    env.inventory.reservations.clear()
    evaluator = Evaluator(_empty_collection, frozenset({"pre", "post"}), frozenset({"transcript"}))
    kinds = {s.kind for s in read_sites([evaluator], env)}
    assert SiteKind.UNRESOLVED in kinds


def test_a_repair_of_a_defect_the_baseline_lacks_is_stale(toy_baseline: Path, tmp_path: Path):
    repairs = tmp_path / "repairs" / "toy_domain"
    repairs.mkdir(parents=True)
    good = TOY_REPAIRS / "toy_domain" / "legacy_transfer_memo.diff"
    shutil.copy(good, repairs / "other.diff")
    (repairs / "other.yaml").write_text(
        "tool: transfer\nclauses: [eff.debit]\ntext: not a defect\n"
    )
    out = tmp_path / "risk"
    done = trace_legacy(toy_baseline, out, tmp_path / "repairs")
    assert done.returncode == 0, done.stderr
    assert "stale" in done.stderr
    (record,) = [json.loads(line) for line in (out / "repairs.jsonl").read_text().splitlines()]
    assert record["status"] == "stale" and (out / "controls.jsonl").read_text() == ""


def test_trace_of_a_run_whose_mutants_are_stale_is_one_line(tmp_path: Path):
    # freeze 1150b599761a06f8 was drawn on toy_domain 1.1.0 (its published folder keeps that
    # corpus); the voucher service (1.2.0) changed ToyEnvironment.reset, a site of its
    # M-RESET mutants
    run = ROOT / "results" / "reference" / "closed_world" / "1150b599761a06f8"
    out = tmp_path / "risk"
    done = harness("trace", "toy_domain", "--from", str(run), "--out", str(out), "--no-controls")
    assert done.returncode == 2, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert "changed since the run's mutants were drawn" in line and "fix:" in line
    assert "Traceback" not in done.stderr
    assert not out.exists()

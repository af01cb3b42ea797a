"""The tau2 target (inspect-evals port): adapters, contracts, grader replay, and the friction
points a new benchmark met (issue 19), each held by a test that can fail."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from test_runner import comparable, ledger
from test_setup_cache import RETAIL_CALL

pytest.importorskip("inspect_evals.tau2")

from harness.checker import REFERENCE_VERSION, ReferenceChecker
from harness.checker.probes import Harvest, candidate_pool, fits
from harness.contracts.model import ArgumentSpec, Surface, Tier
from harness.targets.equality import diff
from harness.targets.registry import load_target
from harness.targets.tau2.adapter import CopyOnReadDict, Tau2Adapter
from harness.targets.tau2.grader import grade, grader_tasks

ROOT = Path(__file__).resolve().parents[1]


def harness(*args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --- adapters --------------------------------------------------------------------------------


def test_fresh_environments_never_share_a_change():
    adapter = Tau2Adapter("airline")
    first = adapter.fresh()
    outcome = adapter.invoke(first, "cancel_reservation", {"reservation_id": "XEHM4B"})
    assert outcome.success and outcome.result["status"] == "cancelled"
    second = adapter.fresh()
    assert adapter.snapshot(second)["reservations"]["XEHM4B"]["status"] != "cancelled"
    changed = [d.dotted() for d in diff(adapter.snapshot(second), adapter.snapshot(first))]
    assert changed and all(p.startswith("reservations.XEHM4B.") for p in changed)


def test_untouched_records_are_shared_between_snapshots():
    adapter = Tau2Adapter("retail")
    env = adapter.fresh()
    before = adapter.snapshot(env)
    adapter.invoke(env, "modify_user_address", dict(RETAIL_CALL))
    after = adapter.snapshot(env)
    assert after["orders"] is not before["orders"]
    some_order = next(iter(before["orders"]))
    assert after["orders"][some_order] is before["orders"][some_order]
    assert after["users"]["ethan_garcia_1261"] != before["users"]["ethan_garcia_1261"]


def test_a_snapshot_is_the_whole_dump_whatever_a_call_did_to_its_tables():
    """Records read, changed, added, deleted and added again: each table's snapshot is the
    dump of every record in the table's order, sharing the pristine JSON where unchanged."""
    adapter = Tau2Adapter("airline")

    def dumped(env):
        return {
            name: {k: r.model_dump(mode="json") for k, r in dict.items(table)}
            for name, table in env.instances[""].db
        }

    env = adapter.fresh()
    pristine = adapter.snapshot(env)
    users = env.instances[""].db.users
    first, second, *_ = list(dict.keys(users))
    users[first]  # read, unchanged: still the pristine JSON
    users[second].name.first_name = "Changed"  # read and changed, same keys in order
    snapshot = adapter.snapshot(env)
    assert snapshot == dumped(env) and list(snapshot["users"]) == list(pristine["users"])
    assert snapshot["users"][first] is pristine["users"][first]
    assert snapshot["users"][second]["name"]["first_name"] == "Changed"
    users["added"] = users[second]  # added, then deleted again: the same keys once more
    del users["added"]
    assert adapter.snapshot(env) == dumped(env)
    moved = users.pop(first)  # deleted and added again: the keys in another order
    users[first] = moved
    snapshot = adapter.snapshot(env)
    assert snapshot == dumped(env) and list(snapshot["users"])[-1] == first
    assert list(snapshot["users"]) == list(dict.keys(users))


def test_copy_on_read_dict_never_changes_the_pristine_record():
    pristine = {"a": {"x": 1}}
    table = CopyOnReadDict(dict(pristine))
    table["a"]["x"] = 2
    assert pristine["a"]["x"] == 1 and table["a"]["x"] == 2 and table.owned == {"a"}


def test_a_loop_over_a_copy_on_read_table_copies_the_records_it_reaches_and_no_more():
    """`items()` and `values()` copy a record when a loop reaches it: a loop that stops
    early leaves the rest shared and unread; what the loop sees, and everything else a
    caller can do with the view, is what `dict.items()` / `dict.values()` of a plain dict
    show (the comparisons, set operations, `reversed`, `mapping` and `repr` own every record
    first, as both views did before)."""
    pristine = {"a": [1], "b": [2], "c": [3]}
    table, plain = CopyOnReadDict(dict(pristine)), dict(pristine)
    for key, value in table.items():
        value.append(0)
        if key == "b":
            break
    assert table.owned == {"a", "b"} and pristine == {"a": [1], "b": [2], "c": [3]}
    assert dict.__getitem__(table, "c") is pristine["c"]  # unread: still the pristine one
    plain["a"], plain["b"] = [1, 0], [2, 0]
    assert next(iter(table.values())) == [1, 0] and ("b", [2, 0]) in table.items()
    assert "b" not in table.items() and ("z", 1) not in table.items()
    assert table.owned == {"a", "b"}
    assert len(table.items()) == len(table.values()) == 3
    assert list(table.items()) == list(plain.items())
    assert table.items() == plain.items() and plain.items() == table.items()
    assert table.items() != {("a", 1)} and not table.items() <= {("a", 1)}
    assert repr(table.items()) == repr(plain.items())
    assert repr(table.values()) == repr(plain.values())
    assert list(reversed(table.items())) == list(reversed(plain.items()))
    assert list(reversed(table.values())) == list(reversed(plain.values()))
    assert dict(table.items().mapping) == dict(plain.items().mapping)
    for operation in (
        lambda view: view & {("a", 1)},
        lambda view: {("a", 1)} & view,
        lambda view: view | {("a", 1)},
        lambda view: view - {("a", 1)},
        lambda view: {("a", 1)} - view,
        lambda view: view ^ set(),
        lambda view: view.isdisjoint({("a", 1)}),
    ):
        outcomes = []
        for view in (table.items(), plain.items()):
            try:
                outcomes.append(repr(operation(view)))
            except TypeError as error:  # lists are unhashable, in both
                outcomes.append(str(error))
        assert outcomes[0] == outcomes[1]
    assert table.owned == {"a", "b", "c"}
    growing = CopyOnReadDict({"a": 1, "b": 2})
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        for _ in growing.items():
            growing["z"] = 3


def _fresh(script: str, *args: str) -> Any:
    """What `script` prints as JSON, run with `args` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


LOOPS = """
import json, sys
from harness.targets.tau2 import adapter as tau2
from harness.targets.tau2.grader import grade, grader_tasks
if sys.argv[1] == "eager":  # as before: every record copied when the view is made
    tau2.CopyOnReadDict.items = lambda self: (self._own_all(), dict.items(self))[1]
    tau2.CopyOnReadDict.values = lambda self: (self._own_all(), dict.values(self))[1]
adapter = tau2.Tau2Adapter("retail")
out, copied = {}, []  # copied: per search, [records copied, records in the table]
for tool, args in [
    ("find_user_id_by_name_zip", {"first_name": "Lucas", "last_name": "Johnson", "zip": "98147"}),
    ("find_user_id_by_name_zip", {"first_name": "No", "last_name": "One", "zip": "00000"}),
    ("find_user_id_by_email", {"email": "mia.garcia2723@example.com"}),
    ("list_all_product_types", {}),
]:
    env = adapter.fresh()
    outcome = adapter.invoke(env, tool, args)
    users = env.instances[""].db.users
    out[json.dumps([tool, args])] = [
        outcome.success,
        json.dumps(outcome.result, sort_keys=True, default=str),
        json.dumps(adapter.snapshot(env), sort_keys=True),
    ]
    copied.append([len(users.owned), len(users)])
for tool in ("cancel_pending_order", "modify_user_address"):
    out[tool] = {t: grade(adapter, t) for t in grader_tasks(adapter, tool)[:8]}
print(json.dumps({"out": out, "copied": copied}))
"""


def test_a_loop_over_the_retail_users_gives_the_same_calls_snapshots_and_grades():
    """In two fresh processes, a loop over a table copying each record as it reaches it
    against copying every record when the view is made: the port's user searches (found
    and not found) return the same results and leave the same snapshots, and the grades of
    retail grader tasks are the same; a search that finds its user early copies fewer
    records."""
    lazy, eager = _fresh(LOOPS, "lazy"), _fresh(LOOPS, "eager")
    assert lazy["out"] == eager["out"]
    found, missing, email, _ = zip(lazy["copied"], eager["copied"], strict=True)
    assert found[1] == [500, 500] and found[0][1] == 500 and found[0][0] < 500 / 4  # not all now
    assert missing[0] == missing[1] == [500, 500]  # a search that finds nothing reads all
    assert email[0][0] < email[1][0] == 500
    searched = lazy["out"]
    assert json.loads(searched[next(iter(searched))][1]) == "lucas_johnson_2067"
    assert any(True in grades.values() for key, grades in searched.items() if key[0] != "[")


def test_a_flight_read_is_a_shell_whose_dates_are_copied_on_read():
    """An airline flight (immutable fields and a table of statuses by date) is copied as a
    shell when read: its fields shared, its dates a table of their own copied on read. A
    change through it reaches neither the pristine flight nor another environment, and the
    snapshot is the dump of what the environment holds, the pristine JSON where unchanged."""
    adapter = Tau2Adapter("airline")
    env = adapter.fresh()
    pristine = adapter.snapshot(env)
    flights = env.instances[""].db.flights
    number, other = list(dict.keys(flights))[:2]
    original = dict.__getitem__(flights, number)
    flight = flights[number]
    assert flight is not original and flight == original
    assert flight.origin is original.origin and isinstance(flight.dates, CopyOnReadDict)
    assert flight.dates.pristine is original.dates and not flight.dates.owned
    date = next(d for d, s in flight.dates.items() if s.status == "available")
    keys = list(original.dates)
    assert flight.dates.owned == set(keys[: keys.index(date) + 1])  # the loop stopped there
    assert len(keys) > len(flight.dates.owned)
    seats = flight.dates[date].available_seats
    seats["economy"] -= 1
    assert original.dates[date].available_seats["economy"] == seats["economy"] + 1
    snapshot = adapter.snapshot(env)
    booked = snapshot["flights"][number]["dates"][date]
    assert booked["available_seats"]["economy"] == seats["economy"]
    assert snapshot["flights"][other] is pristine["flights"][other]
    assert snapshot == {
        name: {k: r.model_dump(mode="json") for k, r in dict.items(table)}
        for name, table in env.instances[""].db
    }
    again = adapter.fresh()
    assert adapter.snapshot(again) == pristine
    assert adapter.invoke(again, "get_flight_status", {"flight_number": number, "date": date})
    flights[other].dates = {}  # a table replaced: the flight is dumped whole
    assert adapter.snapshot(env)["flights"][other]["dates"] == {}
    deep = copy.deepcopy(flights[number])
    assert type(deep.dates) is dict and deep == flights[number]
    assert all(deep.dates[d] is not flights[number].dates[d] for d in deep.dates)


SHELLS = """
import json, sys
from harness.targets.tau2 import adapter as tau2
from harness.targets.tau2.grader import grade, grader_tasks
if sys.argv[1] == "whole":  # as before: a record read is copied whole
    tau2._nested_tables = lambda record: None
route = {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}
out, shells = {}, {}
for domain, calls, graded in [
    (
        "airline",
        [
            ("search_direct_flight", route),
            ("search_onestop_flight", route),
            ("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-20"}),
        ],
        ["book_reservation", "update_reservation_flights", "cancel_reservation"],
    ),
    (
        "retail",
        [("list_all_product_types", {}), ("get_product_details", {"product_id": "6086499569"})],
        ["exchange_delivered_order_items", "modify_pending_order_items"],
    ),
]:
    adapter = tau2.Tau2Adapter(domain)
    for tool, args in calls:
        env = adapter.fresh()
        outcome = adapter.invoke(env, tool, args)
        out[json.dumps([domain, tool, args])] = [
            outcome.success,
            json.dumps(outcome.result, sort_keys=True, default=str),
            json.dumps(adapter.snapshot(env), sort_keys=True),
        ]
    for tool in graded:
        out[domain + " " + tool] = {t: grade(adapter, t) for t in grader_tasks(adapter, tool)[:12]}
    shells[domain] = {name: len(records) for name, records in tau2._load(domain).nested[""].items()}
print(json.dumps({"out": out, "shells": shells}))
"""


def test_records_copied_as_shells_give_the_same_calls_snapshots_and_grades():
    """In two fresh processes, airline flights and retail products copied as shells against
    copied whole when read: the port's flight searches and product reads return the same
    results and leave the same snapshots, and the grades of grader tasks of the tools that
    change flights and products are the same. The shells are the flights and products."""
    shells, whole = _fresh(SHELLS, "shells"), _fresh(SHELLS, "whole")
    assert shells["out"] == whole["out"]
    assert not any(n for counts in whole["shells"].values() for n in counts.values())
    airline, retail = shells["shells"]["airline"], shells["shells"]["retail"]
    assert airline.pop("flights") > 100 and not any(airline.values())
    assert retail.pop("products") > 10 and not any(retail.values())
    searched = shells["out"]
    assert any(json.loads(v[1]) for k, v in searched.items() if "search_direct_flight" in k)
    grades = [g for k, v in searched.items() if " " in k and k[0] != "[" for g in v.values()]
    assert True in grades and len(grades) > 30


def test_telecom_ids_are_deterministic_and_the_device_syncs():
    adapter = Tau2Adapter("telecom")
    args = {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}
    snaps = []
    for _ in range(2):
        env = adapter.fresh()
        assert adapter.invoke(env, "refuel_data", args).success
        snaps.append(adapter.snapshot(env))
    assert diff(snaps[0], snaps[1]) == []
    assert set(snaps[0]) == {"agent", "user"}


def test_tools_are_methods_with_self_injected():
    adapter = Tau2Adapter("airline")
    assert adapter.injected_parameters("book_reservation") == frozenset({"self"})
    assert adapter.tool_function("book_reservation").__qualname__ == (
        "AirlineAgentTools.book_reservation"
    )


def test_every_state_changing_tool_has_a_contract():
    listed = (ROOT / "harness/targets/tau2/STATE_CHANGING_TOOLS.md").read_text()
    for domain in ("airline", "retail", "telecom"):
        section = listed.split(f"## {domain}")[1].split("Read-only")[0]
        tools = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
        contracts = {
            p.stem for p in (ROOT / f"harness/targets/tau2/contracts/{domain}").glob("*.yaml")
        }
        assert tools and tools <= contracts, (domain, tools - contracts)


def test_contracts_validate():
    done = harness("contracts", "validate", "tau2-airline", "tau2-retail", "tau2-telecom")
    assert done.returncode == 0, done.stderr
    assert "29 contracts valid" in done.stdout


# --- grader arm ------------------------------------------------------------------------------


def test_db_match_is_differential_by_construction():
    adapter = Tau2Adapter("airline")
    tasks = grader_tasks(adapter, "cancel_reservation")
    assert tasks and all(t.endswith(":db_match") for t in tasks)
    assert grade(adapter, tasks[0]) is True
    # a mutant that cancels nothing changes the expected and the replayed db alike
    cls = type(adapter.fresh().instances[""])
    original = cls.cancel_reservation
    try:
        cls.cancel_reservation = lambda self, reservation_id: "{}"
        assert grade(adapter, tasks[0]) is True
    finally:
        cls.cancel_reservation = original


def test_env_assertions_see_a_mutant():
    adapter = Tau2Adapter("telecom")
    tasks = grader_tasks(adapter, "toggle_data")
    assert tasks and all(t.endswith(":env_assertions") for t in tasks)
    verdicts = {t: grade(adapter, t) for t in tasks[:10]}
    cls = type(adapter.fresh().instances["user"])
    original = cls.toggle_data
    try:
        cls.toggle_data = lambda self: "Mobile Data is now ON."
        assert any(grade(adapter, t) != verdicts[t] for t in tasks[:10])
    finally:
        cls.toggle_data = original


# --- friction 1: int vs float ----------------------------------------------------------------


def test_witness_names_an_int_float_mismatch():
    report = ReferenceChecker().check(load_target("tau2-airline"), ["send_certificate"])
    (violation,) = [c for c in report.tools[0].clauses if c.verdict.value == "VIOLATES"]
    assert violation.clause_id == "eff.amount"
    assert "equal in value, differ in type: int vs float" in violation.witness.detail


# --- friction 2: annotation-aware probe values, declared pools --------------------------------


def test_fits_keeps_ill_typed_values_out():
    from inspect_evals.tau2.airline.data_model import Passenger

    hint = list[Passenger | dict[str, Any]]
    assert fits([{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}], hint)
    assert not fits([{"payment_id": "x", "amount": 1}], hint)
    assert fits("economy", Literal["economy", "business"])
    assert not fits("", Literal["economy", "business"])
    assert fits(3, float) and not fits(True, int)


def test_candidate_pool_uses_the_hint_and_the_declared_pool():
    import random

    found = Harvest(strings=["economy", "business", "Rent", "zz"])
    spec = ArgumentSpec(type="str")
    hinted = candidate_pool("cabin", spec, found, random.Random(0), Literal["economy", "business"])
    # harvested values that do not fit are dropped; ill-typed edges come after the rest
    assert set(hinted[:2]) == {"economy", "business"} and hinted[2:] == ["", "zz-unknown"]
    declared = ArgumentSpec(type="str", probe_values=["economy"], pool="declared")
    assert candidate_pool("cabin", declared, found, random.Random(0)) == ["economy"]
    assert typing.get_args(Literal["a"]) == ("a",)


def test_checker_version_bumped():
    # 1.3 (issue 27): recorded-state probes; 1.4: closures; 1.5: harvests by table;
    # 1.5.1: the harvest memos bounded by size; 1.5.2: speed and memory only
    assert REFERENCE_VERSION == "1.5.2"


# --- friction 3: non-biconditional success warns ----------------------------------------------


def test_validate_warns_on_a_non_biconditional_signal(tmp_path):
    text = (ROOT / "toy_domain/contracts/get_balance.yaml").read_text()
    path = tmp_path / "get_balance.yaml"
    path.write_text(text)
    done = harness("contracts", "validate", str(path))
    assert done.returncode == 0
    assert "warning:" in done.stderr and "success.biconditional" in done.stderr


# --- the policy surface and quotes across lines -------------------------------------------------


def test_policy_surface_is_agent_visible_and_quotes_may_span_lines():
    from harness.contracts.loader import load_contract

    contract = load_contract(
        ROOT / "harness/targets/tau2/contracts/retail/cancel_pending_order.yaml"
    )
    pending = next(c for c in contract.preconditions if c.id == "pre.pending")
    assert "\n" in pending.provenance.quote
    refunded = load_contract(
        ROOT / "harness/targets/tau2/contracts/airline/cancel_reservation.yaml"
    )
    clause = next(c for c in refunded.effects if c.id == "eff.refunded")
    assert clause.provenance.surface is Surface.POLICY and clause.tier is Tier.AGENT_VISIBLE


def test_a_quote_spanning_lines_must_start_on_the_cited_line(tmp_path):
    source = ROOT / "harness/targets/tau2/contracts/retail/cancel_pending_order.yaml"
    text = source.read_text().replace(
        "file: inspect_evals/tau2/retail/tools.py, line: 21}",
        "file: inspect_evals/tau2/retail/tools.py, line: 22}",
    )
    path = tmp_path / "cancel_pending_order.yaml"
    path.write_text(text)
    done = harness("contracts", "validate", str(path))
    assert done.returncode == 2 and "is not on inspect_evals/tau2/retail/tools.py:22" in done.stderr


# --- the reduced plan CI runs end to end --------------------------------------------------------

PLAN = """
schema_version: 1
name: tau2_ci
description: reduced tau2 plan for CI
seed: 7
timeout_seconds: 60
liveness_probes_per_tool: 4
arms:
  - name: airline
    kind: closed_world
    target: tau2-airline
    tools: [cancel_reservation]
    operators: [M-PHANTOM]
    draw_per_operator: 1
  - name: retail
    kind: closed_world
    target: tau2-retail
    tools: [modify_user_address]
    operators: [M-IGNARG]
    draw_per_operator: 1
  - name: telecom
    kind: closed_world
    target: tau2-telecom
    tools: [toggle_data]
    operators: [M-PHANTOM]
    draw_per_operator: 1
"""


# A run in a fresh interpreter (as `harness run`) that, before its first pair, counts for
# each tool's liveness observations in the run's context, and for the same calls observed
# anew, the records that are the very objects of a fresh snapshot.
SHARED_IN_CONTEXT = """
import json, sys
from pathlib import Path
import harness.execution.executors as executors
from harness.execution.liveness import observe
from harness.execution.pair_scoring import STATE_FIELDS
from harness.execution.runner import execute
found = {}
original = executors.score_pairs
def shared(observations, fresh):
    return sum(
        1
        for o in observations
        for state in STATE_FIELDS
        for table, records in o[state].items()
        if isinstance(records, dict)
        for key, record in records.items()
        if fresh.get(table, {}).get(key) is record
    )
def score_pairs(ctx, pairs, workers, on_outcome):
    for (name, tool), held in ctx.observations.items():
        adapter = ctx.targets[name].adapter
        fresh = adapter.snapshot(adapter.fresh())
        computed = observe(adapter, tool, ctx.corpus.liveness[name][tool])
        found[f"{name}:{tool}"] = [shared(held, fresh), shared(computed, fresh)]
    return original(ctx, pairs, workers, on_outcome)
executors.score_pairs = score_pairs
execute(Path(sys.argv[1]), workers=1)
print(json.dumps(found))
"""


def test_reduced_tau2_plan_end_to_end(tmp_path):
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "tau2_ci.yaml").write_text(PLAN)
    for command in ("draw", "freeze", "run"):
        done = harness(command, "plans/tau2_ci.yaml", cwd=tmp_path)
        assert done.returncode == 0, command + done.stdout + done.stderr
    (run,) = (tmp_path / "results" / "tau2_ci").iterdir()
    rows = [json.loads(line) for line in (run / "ledger.jsonl").read_text().splitlines()]
    first = comparable(ledger(tmp_path, "tau2_ci"))
    assert {r["target"] for r in rows} == {"tau2-airline", "tau2-retail", "tau2-telecom"}
    assert all(r["grader_caught"] is not None for r in rows)
    assert any(r["status"] == "detected" for r in rows)
    # a rerun takes its set-up from the freeze's cache, its observations relinked to the
    # fresh records (`pair_scoring._relinked`): they share as many records with a fresh
    # snapshot as observations computed in the process do; and it scores the same rows
    shutil.rmtree(tmp_path / "results" / "tau2_ci")
    again = subprocess.run(
        [sys.executable, "-c", SHARED_IN_CONTEXT, "plans/tau2_ci.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONHASHSEED": "0"},  # as `harness run` fixes it
    )
    assert again.returncode == 0, again.stdout + again.stderr
    shared = json.loads(again.stdout.strip().splitlines()[-1])
    assert set(shared) == {
        "tau2-airline:cancel_reservation",
        "tau2-retail:modify_user_address",
        "tau2-telecom:toggle_data",
    }
    assert all(held == computed for held, computed in shared.values()), shared
    assert shared["tau2-retail:modify_user_address"][0] > 100, shared
    assert shared["tau2-telecom:toggle_data"][0] == 0  # telecom's records are deep copies
    (run,) = (tmp_path / "results" / "tau2_ci").iterdir()
    (setup,) = json.loads((run / "run.json").read_text())["setup"]
    assert setup["computed"] == {} and setup["from_cache"]["observations"] == 3
    assert comparable(ledger(tmp_path, "tau2_ci")) == first


def test_new_contract_draft_warns_and_leaves_self_out():
    done = harness("new-contract", "cancel_reservation", "--target", "tau2-airline", "--out", "-")
    assert done.returncode == 0, done.stderr
    assert "phantom-effect detection" in done.stdout and "biconditional" in done.stdout
    assert "self:" not in done.stdout and "reservation_id:" in done.stdout


# --- store reads: one pydantic adapter per field type ------------------------------------------

STORE_READS = """
import json, sys
import pydantic
import inspect_ai.util._store_model as store_model
from harness.targets.tau2 import adapter as tau2
from harness.targets.tau2.grader import grade, grader_tasks
made = []
def counting(field_type):
    made.append(field_type)
    return pydantic.TypeAdapter(field_type)
store_model.TypeAdapter = counting  # beneath the harness's: every adapter pydantic builds
looked_up = []  # each `model_fields` found on a StoreModel class by pydantic's descriptor
from pydantic._internal._utils import deprecated_instance_property
descriptor_get = deprecated_instance_property.__get__
def counting_get(self, instance, owner):
    if isinstance(owner, type) and issubclass(owner, store_model.StoreModel):
        looked_up.append(owner)
    return descriptor_get(self, instance, owner)
deprecated_instance_property.__get__ = counting_get
if sys.argv[1] == "off":
    tau2.adapters_reused = lambda: None
    tau2.reads_made_direct = lambda: False
out = {}
for domain, tool, args in [
    ("telecom", "toggle_data", {}),
    ("telecom", "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}),
    ("retail", "get_user_details", {"user_id": "mia_garcia_4516"}),
]:
    adapter = tau2.Tau2Adapter(domain)
    tasks = grader_tasks(adapter, tool)[:6]
    env = adapter.fresh()
    outcome = adapter.invoke(env, tool, args)
    out[tool] = [
        {t: grade(adapter, t) for t in tasks},
        outcome.success,
        json.dumps(outcome.result, sort_keys=True, default=str),
        json.dumps(adapter.snapshot(env), sort_keys=True),
    ]
out["made"] = len(made)
out["types"] = len({repr(t) for t in made})
out["looked_up"] = len(looked_up)
out["direct"] = getattr(store_model.StoreModel.__getattribute__, "direct_reads", False)
print(json.dumps(out))
"""


def test_store_reads_reuse_one_adapter_per_field_type_and_read_the_same():
    """inspect_ai's StoreModel builds a pydantic TypeAdapter on every read of a field that
    is not a scalar, and finds its field names through pydantic's deprecated-access
    descriptor at every read; the harness makes each read reuse one adapter per field type
    and find the names on the class directly. Grades, results and snapshots are the same as
    without either, in two fresh processes; pydantic builds one adapter per type instead of
    one per read, and the descriptor is asked a fraction as often (what is left are
    inspect_ai's other methods, which still ask it)."""
    reused, per_read = _fresh(STORE_READS, "on"), _fresh(STORE_READS, "off")
    made = (reused.pop("made"), per_read.pop("made"))
    types = (reused.pop("types"), per_read.pop("types"))
    looked_up = (reused.pop("looked_up"), per_read.pop("looked_up"))
    assert (reused.pop("direct"), per_read.pop("direct")) == (True, False)
    assert reused == per_read
    assert any(True in grades.values() for grades, *_ in reused.values())
    assert types[0] == types[1] == made[0]  # each type built once ...
    assert made[1] > 100 * made[0]  # ... against once per read
    assert 0 < 5 * looked_up[0] < looked_up[1]


def test_the_direct_store_reads_are_inspect_ais_own_methods_with_the_named_changes():
    """Each replaced `StoreModel` method is inspect-ai's, token for token, once three kinds
    of change are put back: `self.__class__.model_fields` read as what pydantic's
    `model_fields` returns (`getattr(cls, "__pydantic_fields__", {})`), `self.X` read as
    `object.__getattribute__(self, "X")` for the names of `READ_DIRECTLY` alone, and the
    explicit `super()`. Their sources are the ones whose digests `store_reads.py` was
    written against (an upgrade of inspect-ai or pydantic fails here: check the new code and
    update the digests); the replacements keep the originals' file and lines; and the port's
    tool classes find `model_fields` on `BaseModel` and define no `__getattribute__` of
    their own, which the direct reads would pass by."""
    import __future__

    import ast
    import inspect
    import textwrap

    from inspect_ai.util._store_model import StoreModel
    from pydantic import BaseModel

    from harness.targets.tau2 import store_reads

    load_target("tau2-telecom")  # replaces them, if no earlier test has
    model_fields = BaseModel.__dict__["model_fields"].fget.__func__
    assert store_reads.source_digest(model_fields) == store_reads.MODEL_FIELDS_SOURCE
    assert "return getattr(cls, '__pydantic_fields__', {})" in inspect.getsource(model_fields)

    FIELDS_READ = "getattr(object.__getattribute__(self, '__class__'), '__pydantic_fields__', {})"
    undone: list[str] = []

    class Undo(ast.NodeTransformer):
        """The changes put back."""

        def visit_Call(self, node: ast.Call) -> ast.AST:
            if ast.unparse(node) == FIELDS_READ:  # before its inner read is put back
                undone.append("fields")
                return ast.parse("self.__class__.model_fields", mode="eval").body
            self.generic_visit(node)
            text = ast.unparse(node)
            if text == "super(StoreModel, self)":
                undone.append("super")
                return ast.parse("super()", mode="eval").body
            if text.startswith("object.__getattribute__(self, ") and isinstance(
                node.args[1], ast.Constant
            ):  # inspect-ai's own calls pass `name`, a variable
                name = node.args[1].value
                assert name in store_reads.READ_DIRECTLY, text
                undone.append("direct")
                return ast.parse(f"self.{name}", mode="eval").body
            return node

    FUTURE = __future__.annotations.compiler_flag
    made: dict[str, dict[str, int]] = {}
    for name, digest in store_reads.METHOD_SOURCES.items():
        replacement = StoreModel.__dict__[name]
        assert replacement.direct_reads and replacement.__name__ == name
        original = replacement.replaced
        assert store_reads.source_digest(original) == digest
        assert replacement.__code__.co_filename == original.__code__.co_filename
        assert replacement.__code__.co_firstlineno == original.__code__.co_firstlineno
        assert replacement.__globals__ is original.__globals__
        for attribute in ("__qualname__", "__doc__", "__defaults__", "__annotations__"):
            assert getattr(replacement, attribute) == getattr(original, attribute), attribute
        # its own module's `__future__` features, none of store_reads.py's
        assert replacement.__code__.co_flags & FUTURE == original.__code__.co_flags & FUTURE
        tree, made[name] = store_reads.direct_source(original)
        undone.clear()
        back = Undo().visit(tree)
        assert sorted(undone) == sorted(k for k, n in made[name].items() for _ in range(n))
        (own,) = ast.parse(textwrap.dedent(inspect.getsource(original))).body
        assert ast.dump(back.body[0]) == ast.dump(own)
    # the reads each method made through `__getattribute__`, now made directly
    assert {name: counts["direct"] for name, counts in made.items()} == {
        "__getattribute__": 3,
        "_ns_name": 3,
        "_get_and_coerce_field": 5,
        "_coerce_value": 1,
    }
    assert sum(counts["fields"] for counts in made.values()) == 3
    assert sum(counts["super"] for counts in made.values()) == 1

    for cls in _tool_classes():
        assert inspect.getattr_static(cls, "model_fields") is BaseModel.__dict__["model_fields"]
        assert not any("model_fields" in vars(meta) for meta in type(cls).__mro__)
        assert [c for c in cls.__mro__ if "__getattribute__" in vars(c)] == [StoreModel, object]


GUARD = """
import json, sys
from inspect_ai.util._store_model import StoreModel
from harness.targets.tau2 import store_reads
names = list(store_reads.METHOD_SOURCES)
original = {name: StoreModel.__dict__[name] for name in names}
if sys.argv[1] == "other":  # as if one of inspect-ai's methods had changed
    store_reads.METHOD_SOURCES["_coerce_value"] = "0" * 16
first, second = store_reads.reads_made_direct(), store_reads.reads_made_direct()
now = {name: StoreModel.__dict__[name] for name in names}
print(json.dumps([
    first,
    second,
    [now[name] is original[name] for name in names],
    [getattr(now[name], "replaced", None) is original[name] for name in names],
]))
"""


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("same", [True, True, [False] * 4, [True] * 4]),
        ("other", [False, False, [True] * 4, [False] * 4]),
    ],
)
def test_the_direct_store_reads_replace_only_the_methods_they_were_written_against(
    mode: str, expected: list[bool]
):
    """In a fresh process: inspect-ai's four methods as pinned are replaced once (a second
    call finds them replaced); if one has another digest, all four are left alone."""
    assert _fresh(GUARD, mode) == expected


def _tool_classes() -> set[type]:
    """The port's tool classes of every domain."""
    from harness.targets.tau2.adapter import DOMAINS

    return {
        getattr(__import__(role.module, fromlist=[role.cls]), role.cls)
        for roles in DOMAINS.values()
        for role in roles
    }


def test_no_store_field_of_the_ports_tool_classes_names_its_type_by_a_string():
    """A reused adapter is the one pydantic would build at any read only if its type does
    not depend on the namespace it is built in: no string or forward reference in it."""
    from inspect_ai.util import StoreModel

    def forward(annotation: Any) -> bool:
        if isinstance(annotation, str | typing.ForwardRef):
            return True
        return any(forward(arg) for arg in typing.get_args(annotation))

    classes = _tool_classes()
    assert len(classes) == 4 and all(issubclass(c, StoreModel) for c in classes)
    assert not [
        (c.__name__, name)
        for c in classes
        for name, field in c.model_fields.items()
        if forward(field.annotation)
    ]
    unresolved = typing.ForwardRef("Undefined")
    assert not forward(dict[str, int]) and forward(dict[str, unresolved]) and forward("x")


def test_reused_adapters_keep_one_per_hashable_type_and_nothing_else():
    """An unhashable type is built at every read, as before, and kept nowhere; an adapter
    that cannot be made raises to the caller (inspect_ai's `_coerce_value` then returns the
    raw value) and is not kept; equal types share one adapter; `adapters_reused` wraps
    inspect_ai's global once however often it is called."""
    from typing import Annotated

    import inspect_ai.util._store_model as store_model

    from harness.targets.tau2.store_reads import _ReusedAdapters, adapters_reused

    built: list[Any] = []

    def make(field_type: Any) -> object:
        built.append(field_type)
        if field_type is complex:
            raise TypeError("no schema")
        return object()

    reused = _ReusedAdapters(make)
    assert reused(dict[str, int]) is reused(dict[str, int])  # equal, not identical, types
    unhashable = Annotated[int, {"a": 1}]
    assert reused(unhashable) is not reused(unhashable)
    with pytest.raises(TypeError, match="no schema"):
        reused(complex)
    with pytest.raises(TypeError, match="no schema"):
        reused(complex)
    assert built == [dict[str, int], unhashable, unhashable, complex, complex]
    assert list(reused.adapters) == [dict[str, int]]

    adapters_reused()
    first = store_model.TypeAdapter
    adapters_reused()
    assert isinstance(first, _ReusedAdapters) and store_model.TypeAdapter is first
    assert not isinstance(first.make, _ReusedAdapters)

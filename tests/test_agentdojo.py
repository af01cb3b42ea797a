"""The AgentDojo target: the adapter meets the protocol, probes are reproducible, mutants are
seen, errors map to outcomes, and the banking contracts validate and check."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from typing import Annotated

import pytest

pytest.importorskip("agentdojo")

from harness.mutation.sites import tool_sites
from harness.targets.adapter import Adapter, InvokeOutcome, ResetUnsupported
from harness.targets.agentdojo.adapter import (
    SUITES,
    UNORDERED_KEYS,
    AgentDojoAdapter,
    normalise,
    parse_error,
    to_json,
)
from harness.targets.agentdojo.enumerate_tools import OUTPUT as STATE_CHANGING_MD
from harness.targets.equality import canonical_equal, diff, parse_pattern
from harness.targets.registry import BUILTIN_TARGETS, resolve_adapter

BANKING_CLIENT = "agentdojo.default_suites.v1.tools.banking_client"
SEND = {
    "recipient": "CH9300762011623852957",
    "amount": 12.5,
    "subject": "Gift",
    "date": "2022-05-01",
}


@pytest.fixture(scope="module")
def cli_runs():
    """`harness contracts validate` and `harness check` on agentdojo-banking, started together
    (each pays the agentdojo import) and collected once."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    commands = {
        "validate": ["contracts", "validate", "agentdojo-banking"],
        "check": ["check", "agentdojo-banking", "--json", "-"],
    }
    running = {
        name: subprocess.Popen(
            [sys.executable, "-m", "harness", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name, argv in commands.items()
    }
    out = {}
    for name, process in running.items():
        stdout, stderr = process.communicate(timeout=120)
        out[name] = (process.returncode, stdout, stderr)
    return out


@pytest.fixture(scope="module")
def banking() -> AgentDojoAdapter:
    adapter = AgentDojoAdapter("banking")
    adapter.tool_names()  # imports agentdojo and loads the suite once for the module
    return adapter


@pytest.fixture(scope="module")
def workspace() -> AgentDojoAdapter:
    return AgentDojoAdapter("workspace")


def masked_equal(adapter: AgentDojoAdapter, a, b) -> bool:
    masks = [parse_pattern(p) for p in adapter.volatile_paths()]
    return canonical_equal(adapter.snapshot(a), adapter.snapshot(b), masks=masks)


# --- the protocol --------------------------------------------------------------------------


def test_registry_names_one_target_per_suite():
    for suite in SUITES:
        adapter = resolve_adapter(f"agentdojo-{suite}")
        assert isinstance(adapter, AgentDojoAdapter)
        assert adapter.name == f"agentdojo-{suite}" and adapter.suite == suite
        assert adapter.contracts_dir().is_dir()
    assert {f"agentdojo-{s}" for s in SUITES} <= set(BUILTIN_TARGETS)


def test_adapter_meets_the_protocol(banking):
    assert isinstance(banking, Adapter)
    assert re.fullmatch(r"agentdojo \d+\.\d+\.\d+ v1\.2\.2 banking", banking.version())
    # travel and workspace share tool modules: their versions (and so mutant ids) differ
    travel, workspace = (AgentDojoAdapter(s) for s in ("travel", "workspace"))
    assert travel.version() != workspace.version()
    tools = banking.tool_names()
    assert tools == sorted(tools) and {"send_money", "get_balance", "read_file"} <= set(tools)
    root = banking.source_root()
    assert (root / "agentdojo/default_suites/v1/tools/banking_client.py").is_file()
    assert banking.contracts_dir().name == "banking"
    assert banking.injected_parameters("send_money") == frozenset({"account"})
    assert banking.injected_parameters("read_file") == frozenset({"filesystem"})
    function = banking.tool_function("send_money")
    assert function is sys.modules[BANKING_CLIENT].send_money
    with pytest.raises(KeyError, match="unknown tool"):
        banking.tool_function("no_such_tool")
    with pytest.raises(ResetUnsupported, match="no reset path"):
        banking.reset(banking.fresh())
    snapshot = banking.snapshot(banking.fresh())
    assert json.loads(json.dumps(snapshot)) == snapshot  # plain JSON
    assert set(snapshot) == {"bank_account", "filesystem", "user_account"}


def test_unknown_suite_is_refused():
    with pytest.raises(ValueError, match="unknown agentdojo suite"):
        AgentDojoAdapter("casino")


def test_fresh_environments_are_independent(banking):
    first = banking.fresh()
    assert banking.invoke(first, "send_money", dict(SEND)).success
    assert not masked_equal(banking, first, banking.fresh())
    assert masked_equal(banking, banking.fresh(), banking.rebuild())


# --- reproducible probes -------------------------------------------------------------------


def test_two_identical_calls_compare_equal(banking):
    for tool, args in [
        ("send_money", SEND),
        ("schedule_transaction", {**SEND, "recurring": True}),
        ("update_scheduled_transaction", {"id": 7, "amount": 1200.0}),
        ("update_user_info", {"city": "New York"}),
    ]:
        envs = [banking.fresh(), banking.fresh()]
        outcomes = [banking.invoke(env, tool, dict(args)) for env in envs]
        assert outcomes[0] == outcomes[1] and outcomes[0].success, tool
        assert masked_equal(banking, *envs), tool


def test_clock_fields_are_masked(workspace):
    """send_email stamps datetime.now() on the new email (fixed: `clock.py`, but masked in
    any case): two calls compare equal, and the raw snapshots differ at most there."""
    args = {"recipients": ["someone@example.com"], "subject": "Hi", "body": "Hello"}
    envs = [workspace.fresh(), workspace.fresh()]
    for env in envs:
        assert workspace.invoke(env, "send_email", dict(args)).success
    assert masked_equal(workspace, *envs)
    raw = [workspace.snapshot(env) for env in envs]
    assert all(
        path[-1] == "timestamp" or path[:2] in (("inbox", "sent"),)
        for path in (d.path for d in diff(*raw, limit=100))
    )


def _normalised(value):
    """What `normalise` gives, written as a plain recursive copy (its definition)."""
    if isinstance(value, dict):
        return {
            k: sorted(v)
            if k in UNORDERED_KEYS and isinstance(v, list) and all(type(i) is str for i in v)
            else _normalised(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalised(item) for item in value]
    return value


def test_a_snapshot_sorts_the_unordered_lists_and_nothing_else(workspace):
    """A new event's participants are stored as `list(set(...))`, in the hash seed's order:
    the snapshot sorts them, in place in the fresh dump, and is otherwise that dump, key
    for key and in the same order, as the recursive definition gives it."""
    env = workspace.fresh()
    event = {
        "title": "Sync",
        "start_time": "2024-05-20 10:00",
        "end_time": "2024-05-20 11:00",
        "participants": ["zed@example.com", "amy@example.com", "kim@example.com"],
    }
    assert workspace.invoke(env, "create_calendar_event", event).success
    dumped = env.model_dump(mode="json")
    events = dumped["calendar"]["events"]
    new = events[max(events, key=int)]
    new["participants"] = sorted(new["participants"], reverse=True)  # as a hash seed may
    assert len(new["participants"]) == 4  # the owner's address added
    expected = _normalised(copy.deepcopy(dumped))
    assert expected["calendar"]["events"][max(events, key=int)]["participants"] == sorted(
        new["participants"]
    )
    snapshot = workspace.snapshot(env)
    assert snapshot == expected
    assert json.dumps(snapshot) == json.dumps(expected)  # the same key order throughout
    assert normalise(dumped) is dumped and json.dumps(dumped) == json.dumps(expected)
    nested = {"a": [{"participants": ["b", "a"]}, ["x", {"participants": [2, 1]}]]}
    assert normalise(copy.deepcopy(nested)) == _normalised(nested)


def test_the_wall_clock_the_tools_read_is_fixed(workspace):
    """A new email's timestamp and a new file's last_modified are `FIXED_NOW`, in every run;
    a message quoting a refused file's fields (the witness of a row) is the same twice."""
    from harness.targets.agentdojo.clock import FIXED_NOW

    env = workspace.fresh()
    args = {"recipients": ["someone@example.com"], "subject": "Hi", "body": "Hello"}
    assert workspace.invoke(env, "send_email", dict(args)).success
    assert max(e.timestamp for e in env.inbox.emails.values()) == FIXED_NOW
    created = workspace.invoke(env, "create_file", {"filename": "a.txt", "content": "x"})
    assert created.success and created.result is not None
    (new,) = [f for f in env.cloud_drive.files.values() if f.filename == "a.txt"]
    assert new.last_modified == FIXED_NOW and type(new.last_modified) is type(FIXED_NOW)
    from agentdojo.default_suites.v1.tools.cloud_drive_client import CloudDriveFile

    messages = []
    for _ in range(2):
        try:  # the refusal a mutant dropping `owner` met: its message quotes last_modified
            CloudDriveFile(
                id_="1",
                filename="f",
                content="",
                last_modified=sys.modules[
                    "agentdojo.default_suites.v1.tools.cloud_drive_client"
                ].datetime.datetime.now(),
            )
        except Exception as exc:
            messages.append(str(exc))
    assert len(messages) == 2 and messages[0] == messages[1] and "2026, 1, 1, 12" in messages[0]


# --- mutants -------------------------------------------------------------------------------


def test_a_rebound_tool_is_seen_by_invoke(banking, monkeypatch):
    from agentdojo.default_suites.v1.tools.banking_client import BankAccount
    from agentdojo.functions_runtime import Depends

    calls = []

    def send_money(
        account: Annotated[BankAccount, Depends("bank_account")],
        recipient: str,
        amount: float,
        subject: str,
        date: str,
    ) -> dict[str, str]:
        calls.append((recipient, amount))
        return {"message": f"Transaction to {recipient} for {amount} sent."}  # phantom

    monkeypatch.setattr(sys.modules[BANKING_CLIENT], "send_money", send_money)
    assert banking.tool_function("send_money") is send_money
    env = banking.fresh()
    before = banking.snapshot(env)
    outcome = banking.invoke(env, "send_money", dict(SEND))
    assert outcome.success and calls == [(SEND["recipient"], SEND["amount"])]
    assert banking.snapshot(env) == before  # the mutant appended nothing
    assert banking.invoke(banking.fresh(), "send_money", dict(SEND)).success
    assert len(calls) == 2  # the updated Function is cached, and still the mutant
    monkeypatch.undo()
    env = banking.fresh()
    assert banking.invoke(env, "send_money", dict(SEND)).success
    assert len(calls) == 2 and banking.snapshot(env) != before  # the original again


def test_a_rebound_helper_is_seen_by_invoke(banking, monkeypatch):
    monkeypatch.setattr(sys.modules[BANKING_CLIENT], "next_id", lambda account: 999)
    env = banking.fresh()
    assert banking.invoke(env, "send_money", dict(SEND)).success
    assert banking.snapshot(env)["bank_account"]["transactions"][-1]["id"] == 999


def test_tool_sites_find_the_tool_and_its_helpers(banking):
    sites = tool_sites(banking, "send_money")
    assert sites[0].qualname == "send_money"
    assert sites[0].file == "agentdojo/default_suites/v1/tools/banking_client.py"
    assert {s.qualname for s in sites} == {"send_money", "next_id", "get_iban"}


# --- errors and results --------------------------------------------------------------------


def test_a_raised_error_becomes_a_failed_outcome(banking):
    env = banking.fresh()
    before = banking.snapshot(env)
    outcome = banking.invoke(env, "update_scheduled_transaction", {"id": 999})
    assert outcome == InvokeOutcome(
        success=False,
        error_type="ValueError",
        error_message="Transaction with ID 999 not found.",
    )
    assert banking.snapshot(env) == before


def test_invalid_arguments_become_a_validation_error(banking):
    outcome = banking.invoke(banking.fresh(), "send_money", {"recipient": "X"})
    assert not outcome.success and outcome.error_type == "ValidationError"
    assert "amount" in (outcome.error_message or "")


def test_injected_arguments_are_refused(banking):
    with pytest.raises(ValueError, match="injected"):
        banking.invoke(banking.fresh(), "get_balance", {"account": {}})


def test_results_are_json(banking):
    env = banking.fresh()
    recent = banking.invoke(env, "get_most_recent_transactions", {"n": 2})
    assert recent.success and [t["id"] for t in recent.result] == [4, 5]
    assert banking.invoke(env, "get_balance", {}).result == 1810.0
    sent = banking.invoke(env, "send_money", dict(SEND)).result
    assert sent == {"message": "Transaction to CH9300762011623852957 for 12.5 sent."}


def test_parse_error_and_to_json():
    assert parse_error("ValueError: bad: worse") == ("ValueError", "bad: worse")
    assert parse_error("KeyError: ") == ("KeyError", "")
    assert parse_error("no type here") == (None, "no type here")
    import datetime
    import enum

    class Colour(enum.Enum):
        RED = "red"

    value = {1: (datetime.date(2024, 5, 15), Colour.RED), "x": None}
    assert to_json(value) == {"1": ["2024-05-15", "red"], "x": None}


# --- contracts, checker, enumeration -------------------------------------------------------


def _state_changing(suite: str) -> set[str]:
    text = STATE_CHANGING_MD.read_text(encoding="utf-8")
    section = text.split(f"## {suite}\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))


def test_every_state_changing_banking_tool_has_a_contract(banking):
    changing = _state_changing("banking")
    assert changing == {
        "send_money",
        "schedule_transaction",
        "update_scheduled_transaction",
        "update_password",
        "update_user_info",
    }
    contracts = {p.stem for p in banking.contracts_dir().glob("*.yaml")}
    assert changing <= contracts


def test_banking_contracts_validate(cli_runs):
    code, stdout, stderr = cli_runs["validate"]
    assert code == 0, stdout + stderr
    assert "5 contracts valid" in stdout


def test_banking_check_reports_every_contract(cli_runs, banking):
    code, stdout, stderr = cli_runs["check"]
    assert code in (0, 1), stderr
    report = json.loads(stdout)
    assert report["target"] == "agentdojo-banking"
    contracts = {p.stem for p in banking.contracts_dir().glob("*.yaml")}
    assert {t["tool"] for t in report["tools"]} == contracts
    verdicts = {t["tool"]: t["verdict"] for t in report["tools"]}
    # The published baseline: the tools test truthiness, so falsy updates are ignored.
    assert verdicts["update_scheduled_transaction"] == "VIOLATES"
    assert verdicts["send_money"] == "CONFORMS"
    assert code == 1


# In a fresh process: load a suite and grade a task, then read the pipeline package's own
# names three ways (from-import, attribute, unpickling), printing what is loaded after each.
PIPELINE_ON_FIRST_READ = """
import json, pickle, sys
from harness.targets.agentdojo import grader
from harness.targets.registry import resolve_adapter
CLIENTS = ("anthropic", "openai", "cohere")  # google-genai: the ground truth's own import
def loaded():
    return [m for m in CLIENTS if m in sys.modules]
banking = resolve_adapter("agentdojo-banking")
out = {"graded": grader.grade(banking, "user_task_0"), "after_loading": loaded()}
import agentdojo
import agentdojo.agent_pipeline as package
out["bound"] = agentdojo.agent_pipeline is package is sys.modules["agentdojo.agent_pipeline"]
from agentdojo.agent_pipeline import AgentPipeline
out["from_import"] = [AgentPipeline.__module__, loaded()]
out["attribute"] = package.OpenAILLM.__module__
out["unpickled"] = pickle.loads(pickle.dumps(package.PipelineConfig)) is package.PipelineConfig
try:
    package.no_such_name
except AttributeError as exc:
    out["missing"] = str(exc)
print(json.dumps(out))
"""


def test_a_suite_loads_and_grades_without_the_llm_clients_and_its_pipeline_is_whole_when_read():
    """AgentDojo's agent pipeline package imports every LLM client in its `__init__`, which
    took longer than the rest of the suites' loading together; a suite needs none of them.
    The `__init__` now runs on the first read of one of the package's own names, however
    that read comes, and then the package is the whole package. (The ground truth's tool
    execution module imports AgentDojo's Google client itself, so a grade loads google-genai.)"""
    done = subprocess.run(
        [sys.executable, "-c", PIPELINE_ON_FIRST_READ], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["graded"] is True
    assert out["after_loading"] == []
    assert out["bound"] is True
    module, clients = out["from_import"]
    assert module == "agentdojo.agent_pipeline.agent_pipeline"
    assert {"anthropic", "openai"} <= set(clients)
    assert out["attribute"] == "agentdojo.agent_pipeline.llms.openai_llm"
    assert out["unpickled"] is True
    assert out["missing"] == "module 'agentdojo.agent_pipeline' has no attribute 'no_such_name'"


# An AgentDojo whose own `__init__` imports its pipeline package (0.1.35's is empty): a finder
# that runs the real `agentdojo/__init__` and then imports the package whole, as one would.
PIPELINE_IMPORTED_BY_AGENTDOJO = """
import importlib.abc, importlib.util, json, sys
from harness.targets.agentdojo.suite_data import PIPELINE, pipeline_on_first_read
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "agentdojo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        real = spec.loader
        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return real.create_module(spec)
            def exec_module(self, module):
                real.exec_module(module)
                importlib.import_module(PIPELINE)
        spec.loader = Loader()
        return spec
sys.meta_path.insert(0, Finder())
pipeline_on_first_read()
import agentdojo
package = sys.modules[PIPELINE]
print(json.dumps({
    "bound": agentdojo.agent_pipeline is package,
    "whole": "AgentPipeline" in vars(package) and "__getattr__" not in vars(package),
}))
"""


def test_a_pipeline_package_the_agentdojo_package_imports_is_kept_whole():
    """`pipeline_on_first_read` looks for the pipeline package after importing `agentdojo`:
    an AgentDojo whose `__init__` imported it would otherwise have its loaded package
    replaced by one whose `__init__` has not run."""
    done = subprocess.run(
        [sys.executable, "-c", PIPELINE_IMPORTED_BY_AGENTDOJO], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"bound": True, "whole": True}

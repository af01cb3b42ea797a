"""The BFCL multi-turn targets: adapter, canonical state, tasks, isolation of shared state."""

from __future__ import annotations

import ast
import importlib.util
import json

import pytest

from harness.errors import UserError
from harness.targets.adapter import Adapter, PackageVersions, TaskAdapter
from harness.targets.bfcl import adapter as bfcl_adapter
from harness.targets.bfcl import isolation
from harness.targets.bfcl.adapter import BfclAdapter, is_bfcl_refusal
from harness.targets.bfcl.package import CLASSES
from harness.targets.bfcl.state import public_state
from harness.targets.registry import load_target

TARGETS = [f"bfcl-{slug.replace('_', '-')}" for slug in CLASSES]


@pytest.mark.parametrize("name", TARGETS)
def test_every_target_loads_with_the_function_docs_tools(name: str) -> None:
    target = load_target(name)
    adapter = target.adapter
    assert isinstance(adapter, Adapter)
    assert isinstance(adapter, TaskAdapter)
    assert isinstance(adapter, PackageVersions)
    assert adapter.package_versions() == ["bfcl-eval"]
    # the tools are exactly the functions the model is shown
    assert adapter.tool_names() == sorted(adapter.func_docs())
    assert set(target.contracts) <= set(adapter.tool_names())
    snapshot = adapter.snapshot(adapter.fresh())
    assert json.loads(json.dumps(snapshot)) == snapshot
    assert not any(key.startswith("_") for key in snapshot)


def test_file_system_parent_links_are_paths_not_cycles() -> None:
    adapter = BfclAdapter("file_system")
    env = adapter.fresh()
    assert adapter.invoke(env, "cd", {"folder": "document"}).success
    assert adapter.invoke(env, "mkdir", {"dir_name": "temp"}).success
    state = adapter.snapshot(env)
    temp = state["root"]["contents"]["document"]["contents"]["temp"]
    assert temp["parent"] == "workspace/document"
    assert state["root"]["parent"] is None


def test_integer_keys_and_sets_are_canonical() -> None:
    posting = BfclAdapter("posting")
    env = posting.task_environment("multi_turn_base_4")
    assert all(isinstance(k, int) for k in env.tweets)  # the class converts them
    assert all(isinstance(k, str) for k in posting.snapshot(env)["tweets"])
    message = BfclAdapter("message")
    one, two = message.fresh(), message.fresh()
    # strings: their set order follows their hashes, unlike small ints
    one.generated_ids = {"c", "a", "b", "delta", "epsilon"}
    two.generated_ids = {"epsilon", "delta", "b", "a", "c"}
    assert message.snapshot(one)["generated_ids"] == ["a", "b", "c", "delta", "epsilon"]
    assert message.snapshot(one) == message.snapshot(two)


def test_no_public_attribute_holds_a_clock() -> None:
    # the private-state rule masks File._last_modified; a public clock would need masking
    for slug in CLASSES:
        adapter = BfclAdapter(slug)
        for task in adapter.task_ids()[:5]:
            text = json.dumps(adapter.snapshot(adapter.task_environment(task)))
            assert "datetime" not in text


def test_environments_share_nothing_with_the_data_or_each_other() -> None:
    adapter = BfclAdapter("ticket")
    task = adapter.task_ids()[0]
    first = adapter.task_environment(task)
    before = adapter.snapshot(adapter.task_environment(task))
    first.ticket_queue.append({"id": 999})
    first.ticket_queue[0]["status"] = "changed"
    assert adapter.snapshot(adapter.task_environment(task)) == before
    default = adapter.fresh()
    expected = adapter.snapshot(adapter.fresh())
    default.ticket_queue.append({"id": 1})
    default.ticket_queue[0]["status"] = "changed"
    assert adapter.snapshot(adapter.fresh()) == expected
    message = BfclAdapter("message")  # a class whose default is its own DEFAULT_STATE
    env = message.fresh()
    expected = message.snapshot(message.fresh())
    env.inbox[0]["changed"] = True
    env.user_map["someone"] = "USR999"
    assert message.snapshot(message.fresh()) == expected


def test_module_level_state_is_put_back_before_every_environment() -> None:
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import (
        gorilla_file_system,
        long_context,
    )

    adapter = BfclAdapter("vehicle")
    env = adapter.fresh()
    env.long_context = True  # the long-context branch writes a module-level dict
    assert adapter.invoke(env, "get_outside_temperature_from_google", {}).success
    assert "outsideTemperature" in long_context.LONG_WEATHER_EXTENSION
    assert isolation.changed()
    BfclAdapter("file_system").fresh()
    gorilla_file_system.DEFAULT_STATE["root"]._add_file("leak.txt", "x")
    gorilla_file_system.DEFAULT_STATE = {"root": None}  # rebound, not only written
    file_system = BfclAdapter("file_system")
    file_system.fresh()
    assert isolation.changed() == []
    assert "outsideTemperature" not in long_context.LONG_WEATHER_EXTENSION
    assert gorilla_file_system.DEFAULT_STATE["root"].contents == {}


def test_refusals() -> None:
    assert is_bfcl_refusal({"error": "No such file"}) is True
    assert is_bfcl_refusal({"booking_status": False, "error": "Token expired"}) is True
    assert is_bfcl_refusal({"follow_status": False}) is True
    assert is_bfcl_refusal({"follow_status": True}) is None
    assert is_bfcl_refusal({"status": False}) is None  # trading_get_login_status's answer
    assert is_bfcl_refusal({"success": False}) is True
    assert is_bfcl_refusal([{"error": "User not authenticated."}]) is True
    assert is_bfcl_refusal([{"id": 1}]) is None
    adapter = BfclAdapter("file_system")
    outcome = adapter.invoke(adapter.fresh(), "cd", {"folder": "nowhere"})
    assert outcome.success and adapter.is_refusal(outcome.result) is True


def test_invoke_sees_a_rebound_method_and_turns_raises_into_failures() -> None:
    adapter = BfclAdapter("ticket")
    cls = adapter.cls
    original = vars(cls)["logout"]
    try:
        cls.logout = lambda self: {"rebound": True}
        assert adapter.invoke(adapter.fresh(), "logout", {}).result == {"rebound": True}
    finally:
        cls.logout = original
    outcome = adapter.invoke(adapter.fresh(), "get_ticket", {"no_such_argument": 1})
    assert not outcome.success and outcome.error_type == "TypeError"


def test_every_gold_call_is_parsed_into_its_class_tools() -> None:
    tasks = bfcl_adapter.bfcl_tasks()
    assert len(tasks) == 200
    tools = {slug: set(BfclAdapter(slug).tool_names()) for slug in CLASSES}
    names = [name for names in tools.values() for name in names]
    assert len(names) == len(set(names))  # a tool name says its class
    for slug in CLASSES:
        adapter = BfclAdapter(slug)
        expected = 0
        for task in adapter.task_ids():
            texts = [text for turn in tasks[task].ground_truth for text in turn]
            expected += sum(
                ast.parse(text, mode="eval").body.func.id in tools[slug] for text in texts
            )
        parsed = [call for task in adapter.task_ids() for call in adapter.reference_calls(task)]
        assert len(parsed) == expected > 0
        assert all(call.tool in tools[slug] for call in parsed)


def test_positional_gold_arguments_are_named() -> None:
    calls = BfclAdapter("file_system").reference_calls("multi_turn_base_0")
    assert ("sort", {"file_name": "final_report.pdf"}) in [(c.tool, c.args) for c in calls]


def test_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "bfcl_eval" else real(name, *a),
    )
    with pytest.raises(UserError) as raised:
        BfclAdapter("ticket").source_root()
    (line,) = str(raised.value).splitlines()
    assert "pip install --no-deps bfcl-eval==2026.3.23" in line


def test_public_state_skips_private_attributes() -> None:
    env = BfclAdapter("travel").fresh()
    assert "_random" in vars(env)
    assert not any(k.startswith("_") for k in public_state(env))


# --- the grader arms -------------------------------------------------------------------------


def test_both_grader_arms_pass_every_gold_replay_and_split_equals_whole() -> None:
    from harness.targets.bfcl import grader
    from harness.targets.bfcl.tasks import task_order

    tasks = sorted(bfcl_adapter.bfcl_tasks(), key=task_order)
    for arm in grader.ARMS:
        for task in tasks:
            grader_task = f"{task}:{arm}"
            assert grader.grade(grader_task), grader_task
            assert grader.evaluate(grader_task, grader.replay(grader_task)), grader_task
    assert grader.cached_instances() == []


def test_grader_tasks_name_the_arm_and_the_tasks_calling_the_tool() -> None:
    adapter = BfclAdapter("ticket")
    tasks = adapter.grader_tasks("close_ticket")
    assert tasks and all(t.endswith(":shipped") for t in tasks)
    for grader_task in tasks:
        task = grader_task.rpartition(":")[0]
        assert "close_ticket" in [c.tool for c in adapter.reference_calls(task)]
    with pytest.raises(KeyError):
        adapter.grade("multi_turn_base_0:no_such_arm")


def test_a_hand_made_mutant_is_invisible_to_the_shipped_arm_only() -> None:
    # Machinery check, no recall: a close_ticket that changes nothing but says it did.
    from harness.targets.bfcl import grader

    adapter = BfclAdapter("ticket")
    task = adapter.grader_tasks("close_ticket")[0].rpartition(":")[0]
    cls = adapter.cls
    original = vars(cls)["close_ticket"]
    cls.close_ticket = lambda self, ticket_id: {
        "status": f"Ticket {ticket_id} has been closed successfully."
    }
    try:
        for arm, verdict in (("shipped", True), ("expected", False)):
            assert adapter.grade(f"{task}:{arm}") is verdict
            assert adapter.evaluate(f"{task}:{arm}", adapter.replay(f"{task}:{arm}")) is verdict
        assert grader.pristine_class("TicketAPI").close_ticket is not cls.close_ticket
    finally:
        cls.close_ticket = original
    assert adapter.grade(f"{task}:expected")


def test_the_checkers_instance_cache_does_not_outlive_a_grade() -> None:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    from harness.targets.bfcl import grader

    adapter = BfclAdapter("ticket")
    task_id = adapter.grader_tasks("create_ticket")[0].rpartition(":")[0]
    task = bfcl_adapter.bfcl_tasks()[task_id]
    # As shipped, the checker keeps advanced instances a later grade of the task would reuse.
    args = [list(turn) for turn in task.ground_truth]
    multi_turn_checker(grader.model_turns(task), args, grader.test_entry(task), "x", "leaky")
    leaked = [n for n in vars(multi_turn_utils) if n.startswith("leaky_")]
    assert leaked
    kept = vars(multi_turn_utils)[next(n for n in leaked if n.endswith("TicketAPI_instance"))]
    assert kept.ticket_counter != adapter.task_environment(task_id).ticket_counter
    for name in leaked:
        del vars(multi_turn_utils)[name]
    # The grader's runs leave nothing behind and give the same verdict twice.
    verdicts = [adapter.grade(f"{task_id}:shipped") for _ in range(2)]
    assert verdicts == [True, True]
    assert grader.cached_instances() == []


# --- tasks for `harness trace` ---------------------------------------------------------------


def test_trace_tasks_read_the_checkers_state_and_response_checks() -> None:
    from harness.trace.readsites import SiteKind
    from harness.trace.suites import suite_for

    tasks = suite_for(load_target("bfcl-ticket"))
    live = tasks.live_state()
    task_ids = tasks.task_ids()
    assert task_ids == BfclAdapter("ticket").task_ids()
    sites = tasks.read_sites(task_ids[0], live)
    assert {s.kind for s in sites} == {SiteKind.WHOLE_STATE, SiteKind.TRANSCRIPT}
    assert all(".multi_turn_checker." in s.where for s in sites)
    for task in task_ids:
        assert tasks.run(task, tasks.gold_calls(task)).verdict, task
    # a path that leaves another state, or drops a gold result, fails the shipped verdict
    task = next(t for t in task_ids if any(c.tool == "close_ticket" for c in tasks.gold_calls(t)))
    gold = tasks.gold_calls(task)
    dropped = [c for c in gold if c.tool != "close_ticket"]
    assert not tasks.run(task, dropped).verdict


def test_a_returned_refusal_is_no_run_of_a_false_precondition() -> None:
    # The trace's independent verdict read a returned {"error": ...} as a successful call,
    # so a repair that refuses by returning (BFCL's way) still "ran" a false precondition.
    from harness.targets.adapter import InvokeOutcome
    from harness.trace.clauses import clause_fails
    from harness.trace.suites import CallRecord

    contract = load_target("toy_domain").contracts["redeem_voucher"]
    assert contract.success.signal == "result"
    state = {"vouchers": {"vouchers": {}, "redeemed_total": 0}}
    refused = CallRecord(
        "redeem_voucher",
        {"token": "no-such-token"},
        state,
        state,
        InvokeOutcome(success=True, result={"error": "unknown voucher"}),
    )
    assert clause_fails(contract, "pre.token_issued", refused, []) is False
    raised = CallRecord(
        "redeem_voucher", {"token": "no-such-token"}, state, state, InvokeOutcome(success=False)
    )
    assert clause_fails(contract, "pre.token_issued", raised, []) is False


def test_mutable_default_arguments_are_put_back_before_every_environment() -> None:
    # post_tweet stores its default lists in the tweet; mention then appends to the list
    # every later post_tweet without mentions shares, in every instance.
    adapter = BfclAdapter("posting")
    env = adapter.fresh()
    posted = adapter.invoke(env, "post_tweet", {"content": "no mentions"})
    assert posted.success and posted.result["mentions"] == []
    tweet_id = posted.result["id"]
    assert adapter.invoke(env, "mention", {"tweet_id": tweet_id, "mentioned_usernames": ["@x"]})
    assert adapter.cls.post_tweet.__defaults__ == ([], ["@x"])  # the leak, as shipped
    assert isolation.changed()
    other = adapter.fresh()
    assert adapter.cls.post_tweet.__defaults__ == ([], [])
    assert adapter.invoke(other, "post_tweet", {"content": "clean"}).result["mentions"] == []


def test_replayed_snapshots_are_the_same_bytes_in_processes_with_other_hash_seeds() -> None:
    # A set of strings iterates in hash order, which PYTHONHASHSEED changes: the canonical
    # JSON must not (MessageAPI.generated_ids holds ints; strings are put there to see it).
    import os
    import subprocess
    import sys

    script = (
        "import json\n"
        "from harness.targets.bfcl.adapter import BfclAdapter\n"
        "out = {}\n"
        "for slug in ('message', 'file_system', 'posting'):\n"
        "    a = BfclAdapter(slug)\n"
        "    for task in a.task_ids()[:8]:\n"
        "        env = a.task_environment(task)\n"
        "        for call in a.reference_calls(task):\n"
        "            a.invoke(env, call.tool, call.args)\n"
        "        if slug == 'message':\n"
        "            env.generated_ids |= {'id-%d' % i for i in range(12)}\n"
        "        out[slug + task] = a.snapshot(env)\n"
        "print(json.dumps(out))\n"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert '"id-0", "id-1", "id-10", "id-11", "id-2"' in outputs[0]


def test_a_grade_puts_back_the_state_other_classes_of_its_task_left() -> None:
    # A file-system task also runs TwitterAPI: its shared default list must be put back
    # before a grade even in a process that never built a bfcl-posting adapter.
    import subprocess
    import sys

    script = (
        "from harness.targets.bfcl.adapter import BfclAdapter\n"
        "from harness.targets.bfcl.package import bfcl_tasks\n"
        "from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import posting_api\n"
        "task = next(t.id for t in bfcl_tasks().values() if {'TwitterAPI', "
        "'GorillaFileSystem'} <= set(t.involved_classes))\n"
        "adapter = BfclAdapter('file_system')\n"
        "assert adapter.grade(task + ':shipped')\n"
        "posting_api.TwitterAPI.post_tweet.__defaults__[1].append('@leaked')\n"
        "assert adapter.grade(task + ':shipped')\n"
        "print(posting_api.TwitterAPI.post_tweet.__defaults__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "([], [])"


# --- the confirmed sites -----------------------------------------------------------------------


def test_every_confirmed_bfcl_site_matches_the_baseline_and_the_installed_source() -> None:
    import inspect
    from pathlib import Path

    from harness.analysis.scanner_score import load_sites

    root = Path(__file__).resolve().parent.parent
    ledger = load_sites(root / "sites" / "bfcl.yaml")
    rows = [
        json.loads(line)
        for line in (root / "results/bfcl-baseline/tools.jsonl").read_text().splitlines()
    ]
    violated = {
        (row["target"], row["tool"]): {v["clause_id"] for v in row["violations"]} for row in rows
    }
    for site in ledger.sites:
        assert set(site.clauses) <= violated[(site.target, site.tool)], site.id
        adapter = load_target(site.target).adapter
        path = adapter.source_root() / site.file
        cls, _, method = site.function.partition(".")
        function = vars(adapter.cls)[method]
        assert adapter.cls.__name__ == cls, site.id
        lines, start = inspect.getsourcelines(function)
        assert Path(inspect.getsourcefile(function) or "").resolve() == path.resolve()
        assert start <= site.line <= (site.end_line or site.line) < start + len(lines), site.id


def test_bfcl_tasks_are_graded_whole_under_coverage_guided_scoring(monkeypatch) -> None:
    """BFCL's evaluation costs less than the copies its split replay takes
    (bench/split_grading.py), so a task named for reuse on equal inputs is still graded
    whole: `grade`, never `replay`; AgentDojo, whose evaluation is the costly part, splits."""
    from types import SimpleNamespace

    from harness.execution.coverage import Reuse
    from harness.execution.pair_scoring import grader_verdict
    from harness.targets.adapter import SplitGrader, splits
    from harness.targets.registry import load_target

    target = load_target("bfcl-ticket")
    assert isinstance(target.adapter, SplitGrader) and not splits(target.adapter)
    assert splits(load_target("agentdojo-banking").adapter)
    tasks = target.adapter.grader_tasks("close_ticket")
    ctx = SimpleNamespace(grades={(target.name, t): target.adapter.grade(t) for t in tasks})

    replayed: list[str] = []  # recorded, not raised: the grader arm catches what a replay raises

    def replay(task: str) -> tuple:
        replayed.append(task)
        return ()

    monkeypatch.setattr(target.adapter, "replay", replay)
    reuse = Reuse(0, 0, frozenset(tasks), False)
    caught, changed, reused = grader_verdict(ctx, target, "close_ticket", reuse)
    assert (caught, changed, reused, replayed) == (False, [], 0, [])

"""Which BFCL tools change state, found by probing.

`python -m harness.targets.bfcl.enumerate_tools` writes `STATE_CHANGING_TOOLS.md`.

The calls are the ground truth of the 200 tasks of multi_turn_base, replayed task by task
from each task's initial config in order (so each call meets the state its task meant),
plus one call of every tool without arguments on the default environment, plus a short
hand-written script per class (`SCRIPTS`) on the default environment for the tools the
ground truth never calls successfully (logins, follows, the climate control). A tool changes
state when a successful call (not a refusal by `is_refusal`) leaves a public snapshot that
differs from the one before it. A call that changes only private attributes (a current
directory, a random stream, a cache) is listed apart: by the private-state rule such a tool
is not state-changing. Volatile paths are looked for by replaying every task twice: a path
whose final value differs between the two replays is volatile.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.targets.bfcl.adapter import CLASSES, BfclAdapter
from harness.targets.bfcl.state import to_canonical
from harness.targets.equality import JSON, diff

OUT = Path(__file__).resolve().parent / "STATE_CHANGING_TOOLS.md"


# Calls made in order on one default environment, each probed (a login first where the
# tool needs one). They reach the tools no ground-truth call reaches successfully.
SCRIPTS: dict[str, list[tuple[str, dict[str, JSON]]]] = {
    "file_system": [("ls", {"a": True}), ("cd", {"folder": "document"}), ("pwd", {})],
    "message": [
        ("message_login", {"user_id": "USR001"}),
        ("message_get_login_status", {}),
        ("send_message", {"receiver_id": "USR002", "message": "hello"}),
        ("search_messages", {"keyword": "hello"}),
        ("get_message_stats", {}),
        ("view_messages_sent", {}),
    ],
    "posting": [
        ("authenticate_twitter", {"username": "john", "password": "john123"}),
        ("posting_get_login_status", {}),
        ("post_tweet", {"content": "hello", "tags": ["#a"], "mentions": ["@bob"]}),
        ("get_tweet", {"tweet_id": 0}),
        ("get_user_tweets", {"username": "john"}),
        ("search_tweets", {"keyword": "hello"}),
        ("comment", {"tweet_id": 0, "comment_content": "a comment"}),
        ("get_tweet_comments", {"tweet_id": 0}),
        ("follow_user", {"username_to_follow": "carol"}),
        ("list_all_following", {}),
        ("unfollow_user", {"username_to_unfollow": "alice"}),
        ("get_user_stats", {"username": "john"}),
    ],
    "ticket": [
        ("ticket_login", {"username": "john", "password": "pw"}),
        ("ticket_get_login_status", {}),
        ("create_ticket", {"title": "t", "description": "d", "priority": 2}),
        ("get_user_tickets", {}),
        ("logout", {}),
    ],
    "trading": [
        ("trading_logout", {}),
        ("trading_login", {"username": "john", "password": "pw"}),
        ("get_order_history", {}),
        ("get_symbol_by_name", {"name": "Apple"}),
        ("filter_stocks_by_price", {"stocks": ["AAPL", "GOOG"], "min_price": 0, "max_price": 1e6}),
        ("notify_price_change", {"stocks": ["AAPL"], "threshold": 0.1}),
        ("fund_account", {"amount": 100.0}),
        ("get_transaction_history", {}),
    ],
    "travel": [
        ("get_booking_history", {"access_token": "abc123xyz"}),
        (
            "authenticate_travel",
            {
                "client_id": "c",
                "client_secret": "s",
                "refresh_token": "r",
                "grant_type": "read_write",
                "user_first_name": "A",
                "user_last_name": "B",
            },
        ),
        ("get_budget_fiscal_year", {}),
    ],
    "vehicle": [
        ("adjustClimateControl", {"temperature": 20.0, "unit": "celsius", "fanSpeed": 40}),
        ("pressBrakePedal", {"pedalPosition": 1.0}),
        ("releaseBrakePedal", {}),
        ("display_log", {"messages": ["a"]}),
        ("get_outside_temperature_from_weather_com", {}),
    ],
}


def private_state(instance: Any) -> dict[str, JSON]:
    """The `_` attributes as JSON; a random stream as a hash of its state."""
    out: dict[str, JSON] = {}
    for name, value in sorted(vars(instance).items()):
        if not name.startswith("_"):
            continue
        if isinstance(value, random.Random):
            digest = hashlib.sha256(repr(value.getstate()).encode()).hexdigest()[:12]
            out[name] = f"random state {digest}"
        else:
            out[name] = to_canonical(value, (name,), set())
    return out


@dataclass
class ClassReport:
    """What probing found for one class."""

    tools: list[str]
    changed: dict[str, tuple[str, dict[str, JSON], list[str]]] = field(default_factory=dict)
    private_only: dict[str, tuple[str, dict[str, JSON], list[str]]] = field(default_factory=dict)
    refused_but_changed: dict[str, tuple[str, dict[str, JSON], list[str]]] = field(
        default_factory=dict
    )
    succeeded: set[str] = field(default_factory=set)
    volatile: set[str] = field(default_factory=set)
    calls: int = 0
    tasks: int = 0
    seconds: float = 0.0

    @property
    def read_only(self) -> list[str]:
        return sorted(self.succeeded - set(self.changed) - set(self.private_only))

    @property
    def unprobed(self) -> list[str]:
        return sorted(set(self.tools) - self.succeeded)


def _paths(before: JSON, after: JSON) -> list[str]:
    return [d.dotted() for d in diff(before, after, limit=20)]


def _probe(
    adapter: BfclAdapter, env: Any, where: str, tool: str, args: dict, report: ClassReport
) -> None:
    before, private_before = adapter.snapshot(env), private_state(env)
    outcome = adapter.invoke(env, tool, args)
    report.calls += 1
    after, private_after = adapter.snapshot(env), private_state(env)
    public = _paths(before, after)
    refused = not outcome.success or adapter.is_refusal(outcome.result) is True
    if refused:
        if public:
            report.refused_but_changed.setdefault(tool, (where, args, public))
        return
    report.succeeded.add(tool)
    if public:
        report.changed.setdefault(tool, (where, args, public))
    else:
        private = _paths(private_before, private_after)
        if private:
            report.private_only.setdefault(tool, (where, args, private))


def probe_class(adapter: BfclAdapter) -> ClassReport:
    started = time.perf_counter()
    report = ClassReport(tools=adapter.tool_names())
    for tool in report.tools:
        params = [
            p for p in inspect.signature(adapter.tool_function(tool)).parameters if p != "self"
        ]
        if not params:
            _probe(adapter, adapter.fresh(), "default", tool, {}, report)
    env = adapter.fresh()
    for tool, args in SCRIPTS[adapter.slug]:
        _probe(adapter, env, "script", tool, args, report)
    for task in adapter.task_ids():
        report.tasks += 1
        env = adapter.task_environment(task)
        calls = adapter.reference_calls(task)
        for call in calls:
            _probe(adapter, env, task, call.tool, call.args, report)
        twin = adapter.task_environment(task)
        for call in calls:
            adapter.invoke(twin, call.tool, call.args)
        report.volatile |= set(_paths(adapter.snapshot(env), adapter.snapshot(twin)))
    # a tool that changed public state in one call is state-changing, whatever others did
    for tool in report.changed:
        report.private_only.pop(tool, None)
    report.seconds = time.perf_counter() - started
    return report


def _call_text(args: dict[str, JSON]) -> str:
    text = json.dumps(args, sort_keys=True)
    return text if len(text) <= 100 else text[:97] + "..."


def _shown(paths: list[str]) -> str:
    return ", ".join(f"`{p}`" for p in paths[:4]) + (" ..." if len(paths) > 4 else "")


def markdown(reports: dict[str, ClassReport]) -> str:
    total = sum(len(r.changed) for r in reports.values())
    lines = [
        "# BFCL tools that change state",
        "",
        "Generated by `python -m harness.targets.bfcl.enumerate_tools` (do not edit by hand, "
        "except the two sections at the end, which the script writes too). Found by "
        "probing: the ground-truth calls of every task of multi_turn_base that involves the "
        "class, replayed task by task from the task's initial config, and one call of every "
        "tool without arguments on the default environment, and the short script of calls "
        "per class in `enumerate_tools.SCRIPTS` on the default environment (for the tools "
        "no ground-truth call reaches successfully). A tool changes state when a "
        "successful call (not a refusal: `{'error': ...}` or `{'<x>_status': False}`) leaves "
        "a public snapshot that differs from the one before it. Every task was replayed twice "
        "to find volatile paths (paths whose final value differs between the two).",
        "",
        f"**{total} state-changing tools** over {len(reports)} classes.",
        "",
    ]
    for slug, r in reports.items():
        lines += [
            f"## bfcl-{slug.replace('_', '-')} ({CLASSES[slug].cls})",
            "",
            f"{len(r.changed)} of {len(r.tools)} tools change public state ({r.calls} calls "
            f"from {r.tasks} tasks, {r.seconds:.1f} s).",
            "",
            "| tool | first call that changed state (task) | public paths changed |",
            "|---|---|---|",
        ]
        for tool, (where, args, paths) in sorted(r.changed.items()):
            lines.append(f"| `{tool}` | `{_call_text(args)}` ({where}) | {_shown(paths)} |")
        lines += [""]
        if r.private_only:
            lines += ["Private state only (no contract, by the rule below):", ""]
            for tool, (where, args, paths) in sorted(r.private_only.items()):
                lines.append(f"- `{tool}` `{_call_text(args)}` ({where}): {_shown(paths)}")
            lines += [""]
        if r.refused_but_changed:
            lines += ["Refused calls that still changed public state:", ""]
            for tool, (where, args, paths) in sorted(r.refused_but_changed.items()):
                lines.append(f"- `{tool}` `{_call_text(args)}` ({where}): {_shown(paths)}")
            lines += [""]
        lines += [
            "Read-only (successful calls, no state change): "
            + (", ".join(f"`{t}`" for t in r.read_only) or "none"),
            "",
            "No successful call (probing cannot say): "
            + (", ".join(f"`{t}`" for t in r.unprobed) or "none"),
            "",
            "Volatile paths found by probing: "
            + (", ".join(f"`{p}`" for p in sorted(r.volatile)) or "none"),
            "",
        ]
    lines += RULES
    return "\n".join(lines)


RULES = [
    "## The two tools no call reached",
    "",
    "`get_user_tickets` raises `KeyError: 'created_by'` in the default state: the tickets "
    "of task configs have no `created_by`, which it reads of every ticket. "
    "`get_outside_temperature_from_weather_com` returns `{'error': 404}` on every call. "
    "Both read state only, by their source: neither writes an attribute.",
    "",
    "## MathAPI has no target",
    "",
    "MathAPI (17 tools: `add`, `mean`, `logarithm`, ...) keeps no state: its `__init__` sets "
    "only `_api_description`, BFCL lists it in `STATELESS_CLASSES` and never calls its "
    "`_load_scenario`, and its state check compares nothing (no public attribute). A "
    "contract of a stateless tool could only speak of its result; the response check of "
    "BFCL's grader reads those results, but no state-changing tool depends on one. It gets "
    "a target when result-only contracts (observation clauses over pure functions) are in "
    "scope.",
    "",
    "## The private-state rule",
    "",
    "The snapshot is the public state only: attributes whose names do not start with `_`. "
    "BFCL's own state checker (`_compare_instances` in `multi_turn_checker.py`) compares "
    "exactly those, so a defect that changes only private state is invisible to the "
    "benchmark's grader until a later call reads it. A tool whose only effect is on private "
    "state (the file system's `cd`, which moves `_current_dir`; a call that only draws from a "
    "seeded `_random`; TravelAPI's flight-cost cache) is therefore not state-changing and "
    "gets no contract. Its effect shows through the tools that follow it: a recorded call "
    "after `cd` (`mkdir`, `mv`, `touch` in the new directory) is exercised from the state "
    "`cd` left, so a broken `cd` shows as a wrong effect of the next tool's contract.",
    "",
]


def main(argv: Sequence[str] | None = None) -> int:
    reports = {slug: probe_class(BfclAdapter(slug)) for slug in CLASSES}
    OUT.write_text(markdown(reports), encoding="utf-8")
    print(OUT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

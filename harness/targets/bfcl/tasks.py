"""BFCL's multi_turn_base tasks: their initial configs and ground-truth calls.

A task (`data/BFCL_v4_multi_turn_base.json`, one JSON object a line) names its
`involved_classes` and gives each an `initial_config`; its ground truth
(`data/possible_answer/BFCL_v4_multi_turn_base.json`) is a list of turns, each a list of
call strings such as `"sort('final_report.pdf')"` or `"cd(folder='temp')"`. BFCL runs
them with `eval` after prefixing the method name with its instance; here each string is
parsed with `ast` (no evaluation) into the tool and its arguments by name, positional
arguments named from the method's signature. The classes share no state, so one class's
calls, in order, reproduce that class's part of the task.
"""

from __future__ import annotations

import ast
import inspect
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.targets.equality import JSON

CATEGORY = "multi_turn_base"
TASKS_FILE = f"data/BFCL_v4_{CATEGORY}.json"
ANSWERS_FILE = f"data/possible_answer/BFCL_v4_{CATEGORY}.json"


@dataclass(frozen=True)
class GoldCall:
    """One ground-truth call of a task: its turn, its text as BFCL stores it, the tool and
    its arguments by name."""

    turn: int
    text: str
    tool: str
    args: dict[str, JSON]


@dataclass(frozen=True)
class BfclTask:
    """One task: its id, involved classes, initial config (the benchmark's own object:
    deep-copy before use) and ground truth (turns of call strings)."""

    id: str
    involved_classes: tuple[str, ...]
    initial_config: dict[str, Any]
    ground_truth: tuple[tuple[str, ...], ...]


def task_order(task_id: str) -> tuple[str, int]:
    """`multi_turn_base_12` sorts after `multi_turn_base_2`."""
    head, _, number = task_id.rpartition("_")
    return (head, int(number)) if number.isdigit() else (task_id, -1)


@cache
def load_tasks(package_root: Path) -> dict[str, BfclTask]:
    """Every task of `multi_turn_base` with its ground truth, by id (once per process)."""
    answers: dict[str, list[list[str]]] = {}
    for line in (package_root / ANSWERS_FILE).read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            answers[entry["id"]] = entry["ground_truth"]
    tasks: dict[str, BfclTask] = {}
    for line in (package_root / TASKS_FILE).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        tasks[entry["id"]] = BfclTask(
            id=entry["id"],
            involved_classes=tuple(entry["involved_classes"]),
            initial_config=entry["initial_config"],
            ground_truth=tuple(tuple(turn) for turn in answers[entry["id"]]),
        )
    return tasks


def parse_call(text: str, methods: dict[str, Any]) -> tuple[str, dict[str, JSON]]:
    """`"mv(source='a', destination='b')"` -> ("mv", {"source": "a", "destination": "b"}).
    `methods` maps tool names to their functions (for naming positional arguments)."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a call of a tool by name: {text!r}")
    tool = node.func.id
    if tool not in methods:
        raise ValueError(f"{tool!r} is not a tool of this class: {text!r}")
    args: dict[str, JSON] = {}
    if node.args:
        names = [p for p in inspect.signature(methods[tool]).parameters if p != "self"]
        if len(node.args) > len(names):
            raise ValueError(f"too many positional arguments: {text!r}")
        for name, value in zip(names, node.args, strict=False):
            args[name] = ast.literal_eval(value)
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ValueError(f"**kwargs in a gold call: {text!r}")
        args[keyword.arg] = ast.literal_eval(keyword.value)
    return tool, args


def call_tool_name(text: str) -> str:
    """The name a gold call string calls (without parsing its arguments)."""
    node = ast.parse(text.strip(), mode="eval").body
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    raise ValueError(f"not a call of a tool by name: {text!r}")


def gold_calls(task: BfclTask, methods: dict[str, Any]) -> list[GoldCall]:
    """The task's ground-truth calls of the tools in `methods`, in order across turns."""
    out: list[GoldCall] = []
    for turn, calls in enumerate(task.ground_truth):
        for text in calls:
            if call_tool_name(text) in methods:
                tool, args = parse_call(text, methods)
                out.append(GoldCall(turn, text, tool, args))
    return out

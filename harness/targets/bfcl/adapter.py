"""The adapter of the BFCL multi-turn targets: one stateful API class of `bfcl-eval` each.

- Targets: one per stateful class (`bfcl-file-system` GorillaFileSystem, `bfcl-message`
  MessageAPI, `bfcl-posting` TwitterAPI, `bfcl-ticket` TicketAPI, `bfcl-trading` TradingBot,
  `bfcl-travel` TravelAPI, `bfcl-vehicle` VehicleControlAPI). The classes share no state and
  BFCL grades each class's state apart, so a class is the unit. MathAPI keeps no state: it
  has no target (STATE_CHANGING_TOOLS.md).
- Tools: the class's public methods, the same names as its function docs under
  `data/multi_turn_func_doc/` (checked by a test). A tool is a method: the instance is
  injected as `self`, and the class attribute is looked up at every call, so a mutant that
  rebinds it is seen.
- Environment: an instance of the class after `_load_scenario(config, long_context=False)`,
  with a deep copy of the config (`_load_scenario` keeps references into what it is given).
  The default environment is the class's own default state (`_load_scenario({})`) where
  that holds records for its tools to act on (MessageAPI, TradingBot, VehicleControlAPI).
  Where it does not (an empty file system, no ticket, no tweet, no card or booking), it is
  the class's config in the task whose config for it is largest (`DEFAULT_CONFIG_TASK`), so
  a probe from the default state can reach every tool. A task's environment is its
  `initial_config` for the class (`TaskAdapter`).
- Snapshot: the public attributes as canonical JSON (`state.py`), what BFCL's own state
  checker compares. Module-level state the classes could carry between instances is put
  back before every new environment (`isolation.py`).
- Refusals: a `{"error": ...}` result, a `{"<x>_status": False}` or `{"success": False}`
  one, or a list holding only one of those (`is_refusal`).
- Reset: the classes have no reset path (`ResetUnsupported`).
- Grader: two arms over the 200 tasks, BFCL's checker as it ships and an expectation from
  the unmutated classes (`grader.py`); `grader_arm` says which one `grader_tasks` names.

The package is installed without its declared dependencies (README); when it is missing,
every use names the command that installs it.
"""

from __future__ import annotations

import copy
import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.targets.adapter import InvokeOutcome, ReferenceCall, ResetUnsupported
from harness.targets.adapter import default_is_refusal as _default_is_refusal
from harness.targets.bfcl import isolation
from harness.targets.bfcl.package import (
    CLASSES,
    CONTRACTS_ROOT,
    DEFAULT_CONFIG_TASK,
    DISTRIBUTION,
    FUNC_DOC_DIR,
    api_class,
    bfcl_tasks,
    bfcl_version,
    package_root,
)
from harness.targets.bfcl.state import public_state, to_canonical
from harness.targets.bfcl.tasks import BfclTask, gold_calls, task_order
from harness.targets.equality import JSON


def is_bfcl_refusal(value: JSON) -> bool | None:
    """`{"error": ...}`; a dict with a `<x>_status` key that is literally False (TravelAPI's
    `booking_status`, TwitterAPI's `follow_status`, MessageAPI's `login_status`...) or a
    `success` key that is (TicketAPI's `ticket_login`, `logout`); a list holding only such a
    dict (TicketAPI's `get_user_tickets`); else the built-in shapes."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        return is_bfcl_refusal(value[0])
    if isinstance(value, dict) and any(
        (k == "success" or k.endswith("_status")) and v is False
        for k, v in value.items()
        if isinstance(k, str)
    ):
        return True
    return _default_is_refusal(value)


class BfclAdapter:
    """Builds, snapshots and invokes one BFCL API class (implements `Adapter`, `TaskAdapter`
    and `PackageVersions`)."""

    # Which grader arm `grader_tasks` names (grader.py): "shipped", BFCL's checker as it
    # ships (differential), or "expected", against the unmutated classes.
    grader_arm = "shipped"
    # Graded whole even with coverage-guided scoring (`adapter.splits`): a task's evaluation
    # (BFCL's state and response checks, 0.1 ms) costs far less than the copies of every
    # turn's instances its replay takes to feed it, so a replay and its fingerprint cost
    # 1.3 to 2.5 times a whole grade (bfcl-travel: 2.3 ms against 1.15 ms;
    # results/bench/split-grading-2026-12-04.md, bench/split_grading.py). Set at the
    # refreeze that ended BFCL's held-out status (the blind runs were checker 1.3.0's).
    split_grading = False

    def __init__(self, slug: str):
        if slug not in CLASSES:
            raise ValueError(f"unknown BFCL class {slug!r}; use one of {', '.join(CLASSES)}")
        self.slug = slug
        self.name = "bfcl-" + slug.replace("_", "-")

    @property
    def cls(self) -> type:
        return api_class(self.slug)

    def _methods(self) -> dict[str, Callable[..., Any]]:
        return {
            name: value
            for name, value in vars(self.cls).items()
            if not name.startswith("_") and callable(value)
        }

    def _check_tool(self, tool: str) -> None:
        if tool not in self._methods():
            raise KeyError(
                f"unknown tool {tool!r} of target {self.name!r}; known tools: "
                + ", ".join(self.tool_names())
            )

    # --- the protocol ----------------------------------------------------------------------

    def version(self) -> str:
        return f"{bfcl_version()} {CLASSES[self.slug].cls}"

    def package_versions(self) -> list[str]:
        return [DISTRIBUTION]

    def tool_names(self) -> list[str]:
        return sorted(self._methods())

    def environment(self, config: dict[str, Any]) -> Any:
        """A new instance loaded from a deep copy of `config` (one class's part of a task's
        `initial_config`), after module-level state is put back as it was imported."""
        cls = self.cls
        isolation.restore()
        instance = cls()
        instance._load_scenario(copy.deepcopy(config), long_context=False)
        return instance

    def fresh(self) -> Any:
        task = DEFAULT_CONFIG_TASK.get(self.slug)
        config = {} if task is None else self._task(task).initial_config.get(self._class, {})
        return self.environment(config)

    def snapshot(self, env: Any) -> JSON:
        return public_state(env)

    def invoke(self, env: Any, tool: str, args: dict[str, JSON]) -> InvokeOutcome:
        self._check_tool(tool)
        method = getattr(type(env), tool)  # the class attribute now: mutants rebind it
        try:
            result = method(env, **copy.deepcopy(args))
        except Exception as exc:  # a malformed argument or a raise; never propagate
            return InvokeOutcome(
                success=False, error_type=type(exc).__name__, error_message=str(exc)
            )
        return InvokeOutcome(success=True, result=to_canonical(result, ("result",), set()))

    def is_refusal(self, value: JSON) -> bool | None:
        return is_bfcl_refusal(value)

    def reset(self, env: Any) -> None:
        raise ResetUnsupported("BFCL multi-turn classes have no reset path")

    def tool_function(self, tool: str) -> Callable[..., Any]:
        self._check_tool(tool)
        return vars(self.cls)[tool]

    def injected_parameters(self, tool: str) -> frozenset[str]:
        return frozenset({"self"})

    def source_root(self) -> Path:
        return package_root()

    def contracts_dir(self) -> Path:
        return CONTRACTS_ROOT / self.slug

    def volatile_paths(self) -> list[str]:
        # No public attribute holds a clock or a random draw of its own (the clocks are
        # private: File._last_modified); random ids come from a seeded private Random.
        return []

    def func_doc_file(self) -> str:
        """The function docs the model is shown, relative to `source_root()`."""
        return f"{FUNC_DOC_DIR}/{CLASSES[self.slug].func_doc}.json"

    def func_docs(self) -> dict[str, dict[str, Any]]:
        """Each tool's function doc (one JSON object a line), by name."""
        path = self.source_root() / self.func_doc_file()
        docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return {doc["name"]: doc for doc in docs if doc}

    def argument_hints(self, tool: str) -> dict[str, Any]:
        """The tool's parameter annotations (for annotation-aware probe values)."""
        return {
            name: hint
            for name, hint in typing.get_type_hints(self.tool_function(tool)).items()
            if name not in ("self", "return")
        }

    # --- tasks (TaskAdapter) ---------------------------------------------------------------

    @property
    def _class(self) -> str:
        return CLASSES[self.slug].cls

    def _task(self, task: str) -> BfclTask:
        try:
            return bfcl_tasks()[task]
        except KeyError:
            raise KeyError(f"no BFCL multi_turn_base task {task!r}") from None

    def task_ids(self) -> list[str]:
        tasks = bfcl_tasks()
        return sorted(
            (t.id for t in tasks.values() if self._class in t.involved_classes), key=task_order
        )

    def task_environment(self, task: str) -> Any:
        return self.environment(self._task(task).initial_config.get(self._class, {}))

    def reference_calls(self, task: str) -> list[ReferenceCall]:
        return [
            ReferenceCall(call.tool, call.args)
            for call in gold_calls(self._task(task), self._methods())
        ]

    # --- the grader arms (GraderAdapter, SplitGrader) ------------------------------------------

    def grader_tasks(self, tool: str) -> list[str]:
        from harness.targets.bfcl.grader import grader_tasks

        self._check_tool(tool)
        return grader_tasks(self, tool, self.grader_arm)

    def grade(self, task: str) -> bool:
        from harness.targets.bfcl.grader import grade

        return grade(task)

    def replay(self, task: str) -> tuple[Any, ...]:
        from harness.targets.bfcl.grader import replay

        return replay(task)

    def evaluate(self, task: str, inputs: tuple[Any, ...]) -> bool:
        from harness.targets.bfcl.grader import evaluate

        return evaluate(task, inputs)


class BfclFileSystemAdapter(BfclAdapter):
    def __init__(self) -> None:
        super().__init__("file_system")


class BfclMessageAdapter(BfclAdapter):
    def __init__(self) -> None:
        super().__init__("message")


class BfclPostingAdapter(BfclAdapter):
    def __init__(self) -> None:
        super().__init__("posting")


class BfclTicketAdapter(BfclAdapter):
    def __init__(self) -> None:
        super().__init__("ticket")


class BfclTradingAdapter(BfclAdapter):
    def __init__(self) -> None:
        super().__init__("trading")


class BfclTravelAdapter(BfclAdapter):
    def __init__(self) -> None:
        super().__init__("travel")


class BfclVehicleAdapter(BfclAdapter):
    def __init__(self) -> None:
        super().__init__("vehicle")

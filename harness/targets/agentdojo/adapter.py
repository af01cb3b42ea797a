"""The adapter of the AgentDojo target: one suite of the pinned `agentdojo` package.

- Fresh environment: the suite's default environment (with the default injection vectors) is
  loaded once per process, pickled, and unpickled per `fresh()`: an equal environment at a
  third of a deep copy's cost (no class of agentdojo defines its own copy or pickle hooks, so
  no target code runs either way); rebuilding it from the YAML per probe is 50-80x slower
  (see `STATE_CHANGING_TOOLS.md` for the measured ratio).
- Snapshot: the environment's `model_dump(mode="json")`. The suite's derived or duplicated
  fields and its wall-clock-dependent fields are `volatile_paths()` (found by probing with
  `python -m harness.targets.agentdojo.enumerate_tools`).
- Invoke: through the package's own `FunctionsRuntime.run_function`, so argument validation
  and `Depends(...)` injection happen as they do for an agent. The runtime turns a tool's
  exception into the text "ErrorType: message"; that becomes `InvokeOutcome(success=False)`
  with the type parsed from the text.
- Mutants: the suite's `Function` objects hold the original Python function (`.run`). At
  every invoke the tool's current module-level binding is looked up (by module and name);
  when it is not the Function's `.run`, the call goes through a copy of the Function with the
  current function (cached by identity). Helpers and model methods the tool calls are found
  through module globals and class attributes at call time, so their mutants are seen too.
- Reset: AgentDojo environments have no reset path (`ResetUnsupported`).

The wall clock the tools read (a new email's `timestamp`, a file's `last_modified`) is fixed
for the process (`clock.py`): masked in snapshots and results, a stamp still reached ledger
rows through error messages that quote a model's fields.

Not masked: `Calendar.create_event` stores `list(set(participants))`, so the participant order
of a created event (travel, workspace) depends on PYTHONHASHSEED: stable within a process and
its forked workers, different between processes.

`agentdojo` is imported on first use, once per process: importing it costs seconds.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import pickle
import re
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.targets.adapter import InvokeOutcome, ReferenceCall, ResetUnsupported
from harness.targets.agentdojo.suite_data import LoadedSuite as _Suite
from harness.targets.agentdojo.suite_data import load_suite as _load
from harness.targets.equality import JSON

SUITES = ("banking", "slack", "travel", "workspace")
DEFAULT_VERSION = "v1.2.2"
CONTRACTS_ROOT = Path(__file__).resolve().parent / "contracts"

# Derived or duplicated fields, per suite: the `computed_field`s of `Inbox` (`received`,
# `sent`, `drafts`: filtered views of `emails`) and the `initial_*` lists whose records are
# the same objects as those of `emails` / `events` / `files` (the suites' own graders exclude
# them too: `deepdiff_paths_to_exclude` in default_suites/v1/workspace/task_suite.py).
DERIVED_PATHS: dict[str, tuple[str, ...]] = {
    "banking": (),
    "slack": (),
    "travel": (
        "inbox.initial_emails",
        "inbox.received",
        "inbox.sent",
        "inbox.drafts",
        "calendar.initial_events",
    ),
    "workspace": (
        "inbox.initial_emails",
        "inbox.received",
        "inbox.sent",
        "inbox.drafts",
        "calendar.initial_events",
        "cloud_drive.initial_files",
    ),
}
# Wall-clock-dependent fields, per suite, found by probing (two identical calls on two fresh
# environments differ only there): `Inbox.send_email` stamps `datetime.now()` on a new email
# (sent by send_email, create/cancel/reschedule_calendar_event), `CloudDrive.create_file` and
# `append_to_file` stamp `last_modified`; an email created in the run keeps its stamp when
# `delete_email` moves it to the trash.
CLOCK_PATHS: dict[str, tuple[str, ...]] = {
    "banking": (),
    "slack": (),
    "travel": ("inbox.emails.*.timestamp",),
    "workspace": (
        "inbox.emails.*.timestamp",
        "inbox.trash.*.timestamp",
        "cloud_drive.files.*.last_modified",
    ),
}

# `FunctionsRuntime.run_function` reports a caught exception as f"{type(e).__name__}: {e}".
_ERROR_TEXT = re.compile(r"(?s)\A([A-Za-z_][A-Za-z0-9_]*): ?(.*)\Z")


def agentdojo_version() -> str:
    return importlib.metadata.version("agentdojo")


class AgentDojoAdapter:
    """Builds, snapshots and invokes one AgentDojo suite (implements `Adapter`)."""

    def __init__(self, suite: str, version: str = DEFAULT_VERSION):
        if suite not in SUITES:
            raise ValueError(f"unknown agentdojo suite {suite!r}; use one of {', '.join(SUITES)}")
        self.suite = suite
        self.benchmark_version = version
        self.name = f"agentdojo-{suite}"
        # tool -> (current function, the Function that runs it), for rebound tools only.
        self._rebound: dict[str, tuple[Callable[..., Any], Any]] = {}
        self._clock_keys = frozenset(path.rsplit(".", 1)[-1] for path in CLOCK_PATHS[suite])

    # --- loading -------------------------------------------------------------------------

    @property
    def _data(self) -> _Suite:
        return _load(self.suite, self.benchmark_version)

    def _registered(self, tool: str) -> Any:
        """The suite's registered Function for `tool`."""
        try:
            return self._data.functions[tool]
        except KeyError:
            raise KeyError(
                f"unknown tool {tool!r} of target {self.name!r}; known tools: "
                + ", ".join(sorted(self._data.functions))
            ) from None

    # --- the protocol ----------------------------------------------------------------------

    def version(self) -> str:
        # The suite is part of the version: travel and workspace share tool modules, and a
        # mutant id (content-derived from the target version) must differ between them.
        return f"agentdojo {agentdojo_version()} {self.benchmark_version} {self.suite}"

    def package_versions(self) -> list[str]:
        # `PackageVersions`: the installed distribution the tools and the grader come from
        return ["agentdojo"]

    def tool_names(self) -> list[str]:
        return sorted(self._data.functions)

    def fresh(self) -> Any:
        return pickle.loads(self._data.pristine)

    def rebuild(self) -> Any:
        """A fresh environment rebuilt from the suite's YAML (slow; for comparisons only)."""
        return self._data.suite.load_and_inject_default_environment({})

    def snapshot(self, env: Any) -> JSON:
        return normalise(env.model_dump(mode="json"))

    def invoke(self, env: Any, tool: str, args: dict[str, JSON]) -> InvokeOutcome:
        function = self._function(tool)
        injected = sorted(set(function.dependencies) & set(args))
        if injected:
            raise ValueError(
                f"argument {injected[0]!r} of tool {tool!r} is injected by the runtime; "
                "remove it from the call's args"
            )
        runtime = self._data.runtime
        runtime.functions[tool] = function
        try:
            result, error = runtime.run_function(env, tool, dict(args))
        except Exception as exc:  # run_function raises only on harness misuse; never propagate
            return InvokeOutcome(
                success=False, error_type=type(exc).__name__, error_message=str(exc)
            )
        if error is not None:
            error_type, message = parse_error(error)
            return InvokeOutcome(success=False, error_type=error_type, error_message=message)
        # Clock stamps are masked in results as they are in snapshots, so a witness (and the
        # ledger row holding it) is the same in every run.
        return InvokeOutcome(success=True, result=drop_keys(to_json(result), self._clock_keys))

    def reset(self, env: Any) -> None:
        raise ResetUnsupported("AgentDojo environments have no reset path")

    def tool_function(self, tool: str) -> Callable[..., Any]:
        original = self._registered(tool).run
        # Looked up at every call, so a mutant that rebinds the module attribute is seen.
        module = sys.modules.get(original.__module__) or importlib.import_module(
            original.__module__
        )
        return getattr(module, original.__name__)

    def injected_parameters(self, tool: str) -> frozenset[str]:
        function = self.tool_function(tool)
        hints = typing.get_type_hints(function, include_extras=True)
        return frozenset(
            name
            for name, hint in hints.items()
            if typing.get_origin(hint) is typing.Annotated
            and any(isinstance(meta, self._data.depends) for meta in hint.__metadata__)
        )

    def source_root(self) -> Path:
        spec = importlib.util.find_spec("agentdojo")
        if spec is None or spec.origin is None:
            raise ModuleNotFoundError("agentdojo is not installed")
        return Path(spec.origin).resolve().parent.parent

    def contracts_dir(self) -> Path:
        return CONTRACTS_ROOT / self.suite

    # --- the grader arm (GraderAdapter) ------------------------------------------------------

    def grader_tasks(self, tool: str) -> list[str]:
        """The user tasks whose ground truth calls `tool`."""
        from harness.targets.agentdojo.grader import grader_tasks

        return grader_tasks(self, tool)

    def grade(self, task: str) -> bool:
        """The task's own utility verdict after replaying its ground truth (mutants included)."""
        from harness.targets.agentdojo.grader import grade

        return grade(self, task)

    def replay(self, task: str) -> tuple[Any, ...]:
        """`SplitGrader`: the ground truth replayed, up to the suite's result check."""
        from harness.targets.agentdojo.grader import replay

        return replay(self, task)

    def evaluate(self, task: str, inputs: tuple[Any, ...]) -> bool:
        """`SplitGrader`: the suite's own utility check of a `replay`."""
        from harness.targets.agentdojo.grader import evaluate

        return evaluate(self, task, inputs)

    def volatile_paths(self) -> list[str]:
        return [*DERIVED_PATHS[self.suite], *CLOCK_PATHS[self.suite]]

    # --- the user tasks (TaskAdapter) ----------------------------------------------------

    def task_ids(self) -> list[str]:
        return sorted(self._data.suite.user_tasks)

    def task_environment(self, task: str) -> Any:
        """The default environment after the user task's own `init_environment` (no
        injections), as the suite's pipeline prepares it."""
        return self._user_task(task).init_environment(self.fresh())

    def reference_calls(self, task: str) -> list[ReferenceCall]:
        """The task's ground-truth calls, computed from its own environment."""
        calls = self._user_task(task).ground_truth(self.task_environment(task))
        return [ReferenceCall(c.function, dict(to_json(dict(c.args)))) for c in calls]

    def _user_task(self, task: str) -> Any:
        tasks = self._data.suite.user_tasks
        if task not in tasks:
            raise KeyError(f"unknown user task {task!r} of {self.name}")
        return tasks[task]

    # --- mutants -----------------------------------------------------------------------------

    def _function(self, tool: str) -> Any:
        """The Function to run `tool` with: the registered one, or a copy whose `.run` is the
        tool's current module-level binding when a mutant rebound it."""
        registered = self._registered(tool)
        current = self.tool_function(tool)
        if current is registered.run:
            return registered
        cached = self._rebound.get(tool)
        if cached is None or cached[0] is not current:
            cached = (current, registered.model_copy(update={"run": current}))
            self._rebound[tool] = cached
        return cached[1]


def parse_error(text: str) -> tuple[str | None, str]:
    """(exception type name, message) from the runtime's "ErrorType: message" text."""
    match = _ERROR_TEXT.match(text)
    if match is None:
        return None, text
    return match.group(1), match.group(2)


# Lists whose order carries no meaning and is not reproducible: Calendar.create_event stores
# list(set(participants)), ordered by the process's hash seed. Sorted in every snapshot and
# result, so a resumed run (a new process) scores exactly as an uninterrupted one.
UNORDERED_KEYS = frozenset({"participants"})


def normalise(value: JSON) -> JSON:
    """`value` with the lists under UNORDERED_KEYS sorted (str items only), in place: it is
    a dump made for the caller (`model_dump`), so nothing else holds it. A loop over the
    dicts and lists alone, not a call per node and a copy of every one: a workspace
    snapshot has about 1,500 nodes, 184 of them dicts."""
    pending = [value]
    while pending:
        node = pending.pop()
        if type(node) is dict:
            for key, item in node.items():
                if key in UNORDERED_KEYS and _all_str(item):
                    node[key] = sorted(item)  # a value replaced: the dict keeps its size
                elif type(item) is dict or type(item) is list:
                    pending.append(item)
        else:  # a list
            pending.extend(item for item in node if type(item) is dict or type(item) is list)
    return value


def _all_str(value: JSON) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def drop_keys(value: JSON, keys: frozenset[str]) -> JSON:
    """`value` without the dict entries named in `keys`, at any depth."""
    if not keys:
        return value
    if isinstance(value, dict):
        return {k: drop_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [drop_keys(v, keys) for v in value]
    return value


def to_json(value: Any) -> JSON:
    """A tool result as JSON: pydantic models via model_dump(mode="json"), enums as their
    values, datetimes as ISO text, tuples as lists, keys as str."""
    from pydantic import BaseModel

    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, BaseModel):
        return normalise(value.model_dump(mode="json"))
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)  # enums, datetimes, str/int subclasses


class AgentDojoBankingAdapter(AgentDojoAdapter):
    def __init__(self, version: str = DEFAULT_VERSION):
        super().__init__("banking", version)


class AgentDojoSlackAdapter(AgentDojoAdapter):
    def __init__(self, version: str = DEFAULT_VERSION):
        super().__init__("slack", version)


class AgentDojoTravelAdapter(AgentDojoAdapter):
    def __init__(self, version: str = DEFAULT_VERSION):
        super().__init__("travel", version)


class AgentDojoWorkspaceAdapter(AgentDojoAdapter):
    def __init__(self, version: str = DEFAULT_VERSION):
        super().__init__("workspace", version)

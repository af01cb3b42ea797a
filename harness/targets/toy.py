"""The adapter of the built-in toy target (`toy_domain`)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import toy_domain
from harness.targets.adapter import InvokeOutcome, ReferenceCall
from harness.targets.equality import JSON
from toy_domain import TOOLS
from toy_domain.environment import ToyEnvironment, fresh_environment

SERVICES = frozenset({"bank", "inventory", "calendar", "storage", "vouchers"})


class ToyAdapter:
    """Builds, snapshots, invokes and resets the toy domain (implements `Adapter`)."""

    name = "toy_domain"

    def version(self) -> str:
        return toy_domain.__version__

    def tool_names(self) -> list[str]:
        return sorted(TOOLS)

    def fresh(self) -> ToyEnvironment:
        return fresh_environment()

    def snapshot(self, env: ToyEnvironment) -> JSON:
        return env.to_json()

    def invoke(self, env: ToyEnvironment, tool: str, args: dict[str, JSON]) -> InvokeOutcome:
        function = self.tool_function(tool)
        service = self._service_parameter(tool, function)
        if service in args:
            raise ValueError(
                f"argument {service!r} of tool {tool!r} is injected by the adapter; "
                "remove it from the call's args"
            )
        try:
            result = function(**{service: getattr(env, service)}, **args)
        except Exception as error:
            return InvokeOutcome(
                success=False, error_type=type(error).__name__, error_message=str(error)
            )
        return InvokeOutcome(success=True, result=to_json(result))

    def reset(self, env: ToyEnvironment) -> None:
        env.reset()

    def tool_function(self, tool: str) -> Callable[..., Any]:
        try:
            module_name, function_name = TOOLS[tool]
        except KeyError:
            raise KeyError(
                f"unknown tool {tool!r} of target {self.name!r}; known tools: "
                + ", ".join(sorted(TOOLS))
            ) from None
        # Looked up at every call, so a mutant that rebinds the module attribute is seen.
        return getattr(importlib.import_module(module_name), function_name)

    def injected_parameters(self, tool: str) -> frozenset[str]:
        return frozenset({self._service_parameter(tool, self.tool_function(tool))})

    def source_root(self) -> Path:
        return Path(toy_domain.__file__).resolve().parent.parent

    def contracts_dir(self) -> Path:
        return Path(toy_domain.__file__).resolve().parent / "contracts"

    def volatile_paths(self) -> list[str]:
        return ["bank.last_activity"]

    # --- the task suite (TaskAdapter) ----------------------------------------------------

    def task_ids(self) -> list[str]:
        from toy_domain.tasks import TASKS

        return sorted(task.id for task in TASKS)

    def task_environment(self, task: str) -> ToyEnvironment:
        self._task(task)  # an unknown id is an error, not a default environment
        return fresh_environment()  # every toy task starts from the default environment

    def reference_calls(self, task: str) -> list[ReferenceCall]:
        return [ReferenceCall(c.function, dict(c.args)) for c in self._task(task).ground_truth]

    @staticmethod
    def _task(task: str) -> Any:
        from toy_domain.tasks import TASKS

        found = {t.id: t for t in TASKS}
        if task not in found:
            raise KeyError(f"unknown toy task {task!r}; known: {', '.join(sorted(found))}")
        return found[task]

    @staticmethod
    def _service_parameter(tool: str, function: Callable[..., Any]) -> str:
        """The name of the tool's first parameter, which names the service it receives."""
        parameters = list(inspect.signature(function).parameters)
        if not parameters or parameters[0] not in SERVICES:
            raise TypeError(
                f"tool {tool!r}: the first parameter must be one of {sorted(SERVICES)}, "
                f"got {parameters[:1]}"
            )
        return parameters[0]


def to_json(value: Any) -> JSON:
    """A tool result as JSON: dataclasses become dicts, tuples become lists, keys become str."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: to_json(getattr(value, field.name)) for field in dataclasses.fields(value)
        }
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    raise TypeError(f"tool result of type {type(value).__name__} has no JSON form")

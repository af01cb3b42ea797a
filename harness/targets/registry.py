"""Targets by name: adapters registered under the `contract_harness.targets` entry-point
group (the built-ins are registered there too), or `package.module:Name` for any other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.contracts.loader import contract_files, load_contract
from harness.contracts.model import Contract
from harness.errors import Problem, UserError
from harness.plugins import (
    TARGETS_GROUP,
    construct,
    registered,
    require_protocol,
    resolve,
    resolve_reference,
)
from harness.targets.adapter import Adapter

# Every target known by name now: the built-ins and any installed distribution's.
BUILTIN_TARGETS: dict[str, str] = registered(TARGETS_GROUP)


@dataclass
class Target:
    """An adapter and the contracts of its tools, keyed by tool name."""

    adapter: Adapter
    contracts: dict[str, Contract]
    contract_paths: dict[str, Path] = field(default_factory=dict)
    # tool -> the probe half of its recorded calls (`harness.targets.recorded.RecordedCall`),
    # set by whoever loads the corpus (a plan with recorded_calls, `harness check --corpus`)
    recorded: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.adapter.name


# what isinstance(x, Adapter) checks, named in the error when one is missing
_ADAPTER_MEMBERS = sorted([*(m for m in vars(Adapter) if not m.startswith("_")), "name"])


def resolve_adapter(name: str) -> Adapter:
    """A new adapter of the target registered as `name` (or named `package.module:Class`)."""
    adapter = construct(resolve(TARGETS_GROUP, name), name, "target")
    return require_protocol(
        adapter,
        Adapter,
        _ADAPTER_MEMBERS,
        name,
        "target",
        "implement every member of harness.targets.adapter.Adapter (docs/adapters.md)",
    )


def load_target(name: str) -> Target:
    """The adapter named `name` with every contract in its contracts folder."""
    adapter = resolve_adapter(name)
    contracts: dict[str, Contract] = {}
    paths: dict[str, Path] = {}
    tools = set(adapter.tool_names())
    problems: list[Problem] = []
    for path in contract_files([adapter.contracts_dir()]):
        contract = load_contract(path)
        if contract.target != adapter.name:
            problems.append(
                Problem(
                    str(path),
                    "target",
                    f"names target {contract.target!r}",
                    f"write {adapter.name!r}",
                )
            )
        elif contract.tool not in tools:
            problems.append(
                Problem(
                    str(path),
                    "tool",
                    f"{contract.tool!r} is not a tool of {adapter.name}",
                    "use a tool name that `harness check` lists",
                )
            )
        elif contract.tool in contracts:
            problems.append(
                Problem(
                    str(path),
                    "tool",
                    f"second contract for {contract.tool!r} (first: {paths[contract.tool]})",
                    "keep one contract per tool",
                )
            )
        else:
            # drafts never count: no checker ever sees a clause a person has not written
            contracts[contract.tool] = contract.without_drafts()
            paths[contract.tool] = path
    if problems:
        raise UserError(problems)
    return Target(adapter, contracts, paths)


__all__ = ["BUILTIN_TARGETS", "Target", "load_target", "resolve_adapter", "resolve_reference"]

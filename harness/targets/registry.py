"""Targets by name: the built-in adapters, or `package.module:Name` for any other."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.contracts.loader import contract_files, load_contract
from harness.contracts.model import Contract
from harness.errors import Problem, UserError
from harness.targets.adapter import Adapter

BUILTIN_TARGETS: dict[str, str] = {
    "toy_domain": "harness.targets.toy:ToyAdapter",
    "agentdojo-banking": "harness.targets.agentdojo.adapter:AgentDojoBankingAdapter",
    "agentdojo-slack": "harness.targets.agentdojo.adapter:AgentDojoSlackAdapter",
    "agentdojo-travel": "harness.targets.agentdojo.adapter:AgentDojoTravelAdapter",
    "agentdojo-workspace": "harness.targets.agentdojo.adapter:AgentDojoWorkspaceAdapter",
}


@dataclass
class Target:
    """An adapter and the contracts of its tools, keyed by tool name."""

    adapter: Adapter
    contracts: dict[str, Contract]
    contract_paths: dict[str, Path] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.adapter.name


def resolve_reference(reference: str, kind: str) -> Any:
    """The object named by `package.module:Name`; a UserError naming `kind` otherwise."""
    module_name, _, attr = reference.partition(":")
    if not module_name or not attr:
        raise UserError(
            Problem(reference, kind, f"not a {kind} reference", "write package.module:Name")
        )
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UserError(
            Problem(reference, kind, f"cannot load {reference} ({exc})", "check the reference")
        ) from exc


def resolve_adapter(name: str) -> Adapter:
    reference = BUILTIN_TARGETS.get(name, name)
    if ":" not in reference:
        known = ", ".join(sorted(BUILTIN_TARGETS))
        raise UserError(
            Problem(name, "target", "unknown target", f"use one of {known} or package.module:Class")
        )
    return resolve_reference(reference, "target")()


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
            contracts[contract.tool] = contract
            paths[contract.tool] = path
    if problems:
        raise UserError(problems)
    return Target(adapter, contracts, paths)

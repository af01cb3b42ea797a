"""Negative controls (`controls/<id>.yaml`): inputs built to look like defects without being
defects, each with its verdict predicted before the first run.

A control may replace one function (a rewrite its tool's docstring allows) and may patch
the contract's declared probe values, so the checker meets the look-alike input. It is
drawn as a pair of the `negative_controls` arm: the replacement is a Mutant like any other
(applied in memory, its diff in the corpus), the patch travels with the pair.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.checker.verdicts import DefectClass, Verdict
from harness.contracts.loader import load_model
from harness.contracts.model import ArgumentSpec, Contract
from harness.errors import Problem, UserError
from harness.execution.plan import CONTROL_ID
from harness.mutation.model import Arm, Mutant, mutant_id
from harness.targets.registry import Target

NEGATIVE_CONTROLS_ARM = "negative_controls"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Replacement(_Strict):
    function: str = Field(description="Qualified name of a function the tool's call reaches")
    source: str


class ArgumentPatch(_Strict):
    probe_values: list[Any]


class ContractPatch(_Strict):
    signature: dict[str, ArgumentPatch] = Field(default_factory=dict)


class NegativeControl(_Strict):
    id: str
    target: str
    tool: str
    imitates: DefectClass
    description: str
    replacement: Replacement | None = None
    contract_patch: ContractPatch | None = None
    predicted: Verdict


def load_control(root: Path, control_id: str) -> NegativeControl:
    if not re.fullmatch(CONTROL_ID, control_id) or ".." in control_id:
        raise UserError(
            Problem(
                "negative_controls",
                "id",
                f"{control_id!r} is not a control name",
                "name a file of controls/ without its .yaml (letters, digits, . _ -)",
            )
        )
    path = root / "controls" / f"{control_id}.yaml"
    if not path.exists():
        raise UserError(
            Problem(
                str(path),
                "file",
                f"negative control {control_id} not found",
                "write it or remove it from the plan's negative_controls",
            )
        )
    control = load_model(path, NegativeControl, "id")
    if control.id != control_id:
        raise UserError(
            Problem(
                str(path),
                "id",
                f"id {control.id!r} differs from the file name",
                f"write id: {control_id}",
            )
        )
    return control


def patched_contract(contract: Contract, patch: ContractPatch | None) -> Contract:
    """The contract with the patch's probe values put first in each named argument."""
    if patch is None:
        return contract
    signature = dict(contract.signature)
    for name, change in patch.signature.items():
        spec: ArgumentSpec = signature[name]
        signature[name] = spec.model_copy(
            update={"probe_values": [*change.probe_values, *spec.probe_values]}
        )
    return contract.model_copy(update={"signature": signature})


def control_mutant(control: NegativeControl, target: Target, path: str) -> Mutant:
    """The control as a Mutant of the function it replaces (or of the tool, unchanged)."""
    from harness.mutation.enumerate import unified_diff
    from harness.mutation.sites import function_source, tool_sites

    adapter = target.adapter
    if control.tool not in target.contracts:
        raise UserError(
            Problem(
                path,
                "tool",
                f"{control.tool!r} has no contract in {target.name}",
                "name a tool with a contract",
            )
        )
    wanted = control.replacement.function if control.replacement else None
    sites = tool_sites(adapter, control.tool)
    site = next((s for s in sites if s.qualname == (wanted or sites[0].qualname)), None)
    if site is None:
        raise UserError(
            Problem(
                path,
                "replacement.function",
                f"{wanted!r} is not reached by {control.tool}",
                "name one of: " + ", ".join(s.qualname for s in sites),
            )
        )
    root = adapter.source_root()
    original = function_source(site, root)
    source = textwrap.dedent(control.replacement.source) if control.replacement else original
    for name in control.contract_patch.signature if control.contract_patch else {}:
        if name not in target.contracts[control.tool].signature:
            raise UserError(
                Problem(
                    path,
                    f"contract_patch.signature.{name}",
                    "not an argument of the tool",
                    "name an argument",
                )
            )
    version = adapter.version()
    return Mutant(
        id=mutant_id(version, site, control.id, 0, source),
        arm=Arm.CONTROLS,
        operator=control.id,
        defect_class=None,
        target=target.name,
        target_version=version,
        site=site,
        occurrence=0,
        mutated_source=source,
        diff=unified_diff(site, source, root) if source != original else "",
    )

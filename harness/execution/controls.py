"""Old import path of the negative controls, kept for outside code: they live in
`harness.execution.negative_controls`."""

from harness.execution.negative_controls import (
    NEGATIVE_CONTROLS_ARM,
    ArgumentPatch,
    ContractPatch,
    NegativeControl,
    Replacement,
    control_mutant,
    load_control,
    patched_contract,
)

__all__ = [
    "NEGATIVE_CONTROLS_ARM",
    "ArgumentPatch",
    "ContractPatch",
    "NegativeControl",
    "Replacement",
    "control_mutant",
    "load_control",
    "patched_contract",
]

"""Old import path of the control operators (behaviour-preserving rewrites), kept for outside
code: they live in `harness.mutation.control_operators`."""

from harness.mutation.control_operators import (
    CONTROL_OPERATORS,
    REWORD_PREFIX,
    Commute,
    Extract,
    Rename,
    Reorder,
    Reword,
)

__all__ = [
    "CONTROL_OPERATORS",
    "REWORD_PREFIX",
    "Commute",
    "Extract",
    "Rename",
    "Reorder",
    "Reword",
]

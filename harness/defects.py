"""The defect-class vocabulary: the names of the rules a mutant breaks and a checker grades.

It sits below both `harness.mutation` (an operator names the class it injects) and the
checkers (a clause names the class it grades), so neither imports the other for a name, and
the mutation package stays out of the reference checker's freeze scope.
"""

from __future__ import annotations

from enum import StrEnum


class DefectClass(StrEnum):
    """The checker's rules. The first six are DESIGN.md's classes; then clauses that the six
    do not cover: a frame clause broken, a legal call refused, and the two axes of an
    observation clause (an artifact used outside its validity window on the environment's
    clock, or accepted although its bytes were altered)."""

    PHANTOM_EFFECT = "phantom_effect"
    UNENFORCED_PRECONDITION = "unenforced_precondition"
    IGNORED_ARGUMENT = "ignored_argument"
    PARTIAL_EFFECT = "partial_effect"
    INVARIANT_BREAK = "invariant_break"
    RESET_LEAK = "reset_leak"
    FRAME_BREAK = "frame_break"
    REFUSED_LEGAL_CALL = "refused_legal_call"
    VALIDITY_BREAK = "validity_break"
    INTEGRITY_BREAK = "integrity_break"


__all__ = ["DefectClass"]

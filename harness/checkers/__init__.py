"""Old import path of the checker registry, kept for outside code: `harness.checker_registry`."""

from harness.checker_registry import resolve_checker

__all__ = ["resolve_checker"]

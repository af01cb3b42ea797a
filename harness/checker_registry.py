"""Checkers by name: the registry every checker is resolved through.

A checker is any class meeting `harness.checker.Checker` (name, version, `check(target,
tools) -> CheckReport`, `scope_files()`), registered under the `contract_harness.checkers`
entry-point group or named `package.module:Class`. A class whose constructor takes `seed`
gets the plan's `checker_seed`.

Two ship: `reference` (`harness.checker`, the checker under test) and `static-scanner`
(`harness.scanner.as_checker`, the static scanner run as a checker for the
static-versus-dynamic comparison; outside `harness/checker/`, so not in the reference
checker's freeze scope, and with a scope of its own).
"""

from __future__ import annotations

import inspect
from typing import Any

from harness.plugins import CHECKERS_GROUP, construct, require_protocol, resolve

# what isinstance(x, Checker) checks, named in the error when one is missing
_CHECKER_MEMBERS = ("name", "version", "check", "scope_files")


def resolve_checker(name: str, seed: int = 0) -> Any:
    """A new checker registered as `name` (or named `package.module:Class`)."""
    from harness.checker import Checker

    factory = resolve(CHECKERS_GROUP, name)
    takes_seed = callable(factory) and "seed" in _parameters(factory)
    checker = construct(factory, name, "checker", **({"seed": seed} if takes_seed else {}))
    return require_protocol(
        checker,
        Checker,
        _CHECKER_MEMBERS,
        name,
        "checker",
        "implement name, version, check(target, tools) and scope_files() (docs/checkers.md)",
    )


def _parameters(factory: Any) -> list[str]:
    try:
        return list(inspect.signature(factory).parameters)
    except (TypeError, ValueError):
        return []

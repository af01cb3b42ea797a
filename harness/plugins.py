"""Plug-ins by name: targets and checkers registered as entry points, or `package.module:Name`.

Two entry-point groups, `contract_harness.targets` and `contract_harness.checkers`, name
the adapter classes and checker classes a distribution offers. This package registers its
own built-ins there (pyproject.toml), so they are found the same way as anyone else's.
A name that holds a colon is a reference and is imported directly.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any

from harness.errors import Problem, UserError

TARGETS_GROUP = "contract_harness.targets"
CHECKERS_GROUP = "contract_harness.checkers"

# What this package's own pyproject registers; used only where the installed metadata is
# missing (a source tree run without `pip install -e .`), so a bare checkout still works.
_SHIPPED: dict[str, dict[str, str]] = {
    TARGETS_GROUP: {
        "toy_domain": "harness.targets.toy:ToyAdapter",
        "agentdojo-banking": "harness.targets.agentdojo.adapter:AgentDojoBankingAdapter",
        "agentdojo-slack": "harness.targets.agentdojo.adapter:AgentDojoSlackAdapter",
        "agentdojo-travel": "harness.targets.agentdojo.adapter:AgentDojoTravelAdapter",
        "agentdojo-workspace": "harness.targets.agentdojo.adapter:AgentDojoWorkspaceAdapter",
    },
    CHECKERS_GROUP: {
        "reference": "harness.checker:ReferenceChecker",
        "static-scanner": "harness.scanner.as_checker:StaticScannerChecker",
    },
}

_KIND = {TARGETS_GROUP: "target", CHECKERS_GROUP: "checker"}


SHIPPED_BY = "contract-harness"  # the distribution whose pyproject registers _SHIPPED

# Entry points by group, search path and lookup function: reading every installed
# distribution's metadata costs tens of milliseconds, and a run resolves names many times.
_FOUND: dict[tuple[str, tuple[str, ...], Any], dict[str, set[tuple[str, str]]]] = {}


def _by_name(group: str) -> dict[str, set[tuple[str, str]]]:
    """Name -> {(distribution, `package.module:Name`)} of every registration in `group`
    (one distribution found twice on the path, as an editable install is, counts once)."""
    key = (group, tuple(sys.path), entry_points)
    if key not in _FOUND:
        found: dict[str, set[tuple[str, str]]] = {}
        for ep in entry_points(group=group):
            dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
            found.setdefault(ep.name, set()).add((dist, ep.value))
        _FOUND[key] = found
    merged = {name: set(regs) for name, regs in _FOUND[key].items()}
    for name, value in _SHIPPED[group].items():
        merged.setdefault(name, {(SHIPPED_BY, value)})
    return merged


def registrations(group: str) -> dict[str, tuple[str, str]]:
    """Name -> (distribution, `package.module:Name`) for every plug-in of `group`. A name
    two distributions register (a plug-in reusing a built-in's name, say) is a one-line
    error naming both: one would silently replace the other."""
    kind = _KIND[group]
    out = {}
    for name, regs in sorted(_by_name(group).items()):
        dists = sorted({dist for dist, _ in regs})
        if len(regs) > 1:
            raise UserError(
                Problem(
                    name,
                    kind,
                    f"registered twice under {group}, by "
                    + " and by ".join(f"{dist} ({value})" for dist, value in sorted(regs)),
                    f"uninstall one of {', '.join(dists)}, or rename its entry point",
                )
            )
        (out[name],) = regs
    return out


def registered(group: str) -> dict[str, str]:
    """Name -> `package.module:Name` for every plug-in of `group`."""
    return {name: value for name, (_, value) in registrations(group).items()}


def resolve_reference(reference: str, kind: str) -> Any:
    """The object named by `package.module:Name`; a UserError naming `kind` otherwise."""
    module_name, _, attr = reference.partition(":")
    if not module_name or not attr:
        raise UserError(
            Problem(reference, kind, f"not a {kind} reference", "write package.module:Name")
        )
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise UserError(
            Problem(
                reference,
                kind,
                f"cannot load {reference} ({type(exc).__name__}: {exc})",
                "check the module is importable (installed, or on PYTHONPATH) and the name",
            )
        ) from exc
    return value


def resolve(group: str, name: str) -> Any:
    """The class registered as `name` in `group`, or named by a `package.module:Name`."""
    kind = _KIND[group]
    if ":" in name:
        return resolve_reference(name, kind)
    known = registered(group)
    if name not in known:
        raise UserError(
            Problem(
                name,
                kind,
                f"unknown {kind}",
                f"use one of {', '.join(known)}, a package.module:Name, or register one "
                f"under the entry-point group {group}",
            )
        )
    return resolve_reference(known[name], kind)


def construct(factory: Any, name: str, kind: str, **kwargs: Any) -> Any:
    """`factory(**kwargs)`; a factory that cannot be called so, or that is no class (a
    function named by mistake would run: `harness.cli:main` ran the command line again,
    without end), is a UserError, not a crash."""
    if not isinstance(factory, type):
        raise UserError(
            Problem(
                name,
                kind,
                f"names {getattr(factory, '__name__', factory)!s}, which is no class",
                f"name a {kind} class (package.module:Class)",
            )
        )
    try:
        return factory(**kwargs)
    except TypeError as exc:
        raise UserError(
            Problem(
                name,
                kind,
                f"cannot construct {getattr(factory, '__name__', factory)!s} ({exc})",
                f"name a {kind} class whose constructor takes no required arguments",
            )
        ) from exc


def require_protocol(
    plugin: Any, protocol: type, members: Sequence[str], name: str, kind: str, fix: str
) -> Any:
    """`plugin` if it is an instance of the runtime-checkable `protocol`; otherwise a
    UserError naming the members it lacks."""
    if isinstance(plugin, protocol):
        return plugin
    missing = [m for m in members if not hasattr(plugin, m)]
    raise UserError(
        Problem(
            name,
            kind,
            f"{type(plugin).__name__} does not meet the {protocol.__name__} protocol "
            f"(missing: {', '.join(missing)})",
            fix,
        )
    )

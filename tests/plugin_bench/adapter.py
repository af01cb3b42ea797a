"""The adapter of plugin_bench: what contract-harness needs, nothing more."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plugin_bench
from harness.targets.adapter import InvokeOutcome, ResetUnsupported
from plugin_bench import library

PACKAGE_DIR = Path(plugin_bench.__file__).resolve().parent


class PluginBenchAdapter:
    name = "plugin_bench"

    def version(self) -> str:
        return plugin_bench.__version__

    def tool_names(self) -> list[str]:
        return sorted(library.TOOLS)

    def fresh(self) -> library.Library:
        return library.fresh_library()

    def snapshot(self, env: library.Library) -> Any:
        return {"library": dataclasses.asdict(env)}

    def invoke(self, env: library.Library, tool: str, args: dict[str, Any]) -> InvokeOutcome:
        try:
            result = self.tool_function(tool)(env, **args)
        except Exception as exc:  # a tool's error is an outcome, never a crash
            return InvokeOutcome(False, None, type(exc).__name__, str(exc))
        return InvokeOutcome(True, result)

    def reset(self, env: library.Library) -> None:
        raise ResetUnsupported("plugin_bench has no reset path")

    def tool_function(self, tool: str) -> Callable[..., Any]:
        return getattr(library, tool)  # looked up now: a mutant rebinds the module attribute

    def injected_parameters(self, tool: str) -> frozenset[str]:
        return frozenset({"library"})

    def source_root(self) -> Path:
        return PACKAGE_DIR.parent

    def contracts_dir(self) -> Path:
        return PACKAGE_DIR / "contracts"

    def volatile_paths(self) -> list[str]:
        return []

"""Module-level and class-level state of the BFCL classes, put back before every environment.

State that outlives an instance, found by reading the installed source:
- `long_context.py`'s module-level dicts and lists, which tools write in long-context mode
  (`VehicleControlAPI.get_outside_temperature_from_google` sets
  `LONG_WEATHER_EXTENSION["outsideTemperature"]`), imported by name into the class modules;
- each class module's `DEFAULT_STATE`, deep-copied by `_load_scenario` but shared, so a
  tool (or a mutant) that wrote into it would change every later default environment;
- the mutable default arguments of the classes' methods: `TwitterAPI.post_tweet(content,
  tags=[], mentions=[])` stores the default lists in the tweet itself, so `mention` on a
  tweet posted without mentions appends to the one default list every later call shares
  (in every instance: BFCL's model and ground-truth instances alike);
- any mutable class attribute (none today; watched all the same).
`remember(module)` keeps a deep copy of each such container when a class is first imported
(before any tool ran); `restore()` puts back the original object under its name and its
original contents, so no probe, pair or task sees what an earlier one wrote. Functions are
never touched: a mutant rebinds those, and the harness undoes it itself. Across processes
nothing survives: every process imports the package afresh. The multi-turn checker's own
instance cache lives in its module's globals and is handled by the grader (`grader.py`).
"""

from __future__ import annotations

import copy
import types
from dataclasses import dataclass
from typing import Any

LONG_CONTEXT_MODULE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.long_context"
MUTABLE = (dict, list, set)


class Defaults:
    """A function's positional defaults as an owner of numbered containers (`setattr` of
    a number puts the original object back in `__defaults__`)."""

    def __init__(self, function: types.FunctionType) -> None:
        self.function = function
        self.__name__ = function.__qualname__ + ".__defaults__"

    def get(self, index: int) -> Any:
        return (self.function.__defaults__ or ())[index]

    def set(self, index: int, value: Any) -> None:
        defaults = list(self.function.__defaults__ or ())
        defaults[index] = value
        self.function.__defaults__ = tuple(defaults)


@dataclass
class Kept:
    """One module- or class-level container: where it lives, the object, its contents."""

    owner: Any
    name: str
    original: Any
    contents: Any


_kept: dict[tuple[int, str], Kept] = {}
_modules: set[str] = set()


def _keep(owner: Any, name: str, value: Any) -> None:
    key = (id(owner), name)
    if key not in _kept:
        _kept[key] = Kept(owner, name, value, copy.deepcopy(value))


def remember(module: types.ModuleType) -> None:
    """Keep the mutable module- and class-level containers of `module` (and of
    `long_context`), as they are now: call before any tool of the module has run."""
    import importlib

    for mod in (module, importlib.import_module(LONG_CONTEXT_MODULE)):
        if mod.__name__ in _modules:
            continue
        _modules.add(mod.__name__)
        for name, value in vars(mod).items():
            if name.startswith("__"):
                continue
            if isinstance(value, MUTABLE):
                _keep(mod, name, value)
            elif isinstance(value, type) and value.__module__ == mod.__name__:
                for attr, attr_value in vars(value).items():
                    if not attr.startswith("__") and isinstance(attr_value, MUTABLE):
                        _keep(value, attr, attr_value)
                    elif isinstance(attr_value, types.FunctionType):
                        _keep_defaults(attr_value)


def _keep_defaults(function: types.FunctionType) -> None:
    owner = Defaults(function)
    for index, default in enumerate(function.__defaults__ or ()):
        if isinstance(default, MUTABLE):
            _keep(owner, str(index), default)


def changed() -> list[str]:
    """The kept containers that differ from how they were first seen (`module.NAME`)."""
    out = []
    for kept in _kept.values():
        current = _current(kept)
        if current is not kept.original or current != kept.contents:
            out.append(f"{getattr(kept.owner, '__name__', kept.owner)}.{kept.name}")
    return out


def restore() -> None:
    """Put every kept container back: the original object, with its original contents."""
    for kept in _kept.values():
        if _current(kept) is not kept.original:
            _put_back(kept)
        if kept.original != kept.contents:
            fresh = copy.deepcopy(kept.contents)
            kept.original.clear()
            if isinstance(kept.original, list):
                kept.original.extend(fresh)
            else:
                kept.original.update(fresh)


def _current(kept: Kept) -> Any:
    if isinstance(kept.owner, Defaults):
        return kept.owner.get(int(kept.name))
    return vars(kept.owner).get(kept.name)


def _put_back(kept: Kept) -> None:
    if isinstance(kept.owner, Defaults):
        kept.owner.set(int(kept.name), kept.original)
    else:
        setattr(kept.owner, kept.name, kept.original)

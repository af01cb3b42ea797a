"""The public state of a BFCL multi-turn instance as canonical JSON.

The rule: the snapshot is what BFCL's own state checker compares, in JSON. Its
`_compare_instances` reads every attribute of `vars(instance)` not starting with `_`, so a
private attribute (the file system's `_current_dir`, a `random.Random`, a flight-cost cache)
stays out, and so does every wall-clock stamp these classes keep (`File._last_modified` is
private: no public attribute holds a clock, which `tests/test_bfcl.py` checks).

Shapes the encoder meets and how it writes each, so that equal states give equal JSON:
- objects (`Directory`, `File`): their public attributes; `Directory.parent` points back up
  the tree (a cycle), so a parent is written as its path from the root (`"/a/b"`, or None),
  which still shows a parent a tool forgot to update;
- dicts with integer keys (`TwitterAPI.tweets`, `TradingBot.orders`): keys as strings
  (JSON has no other), each written once; two keys that collide as strings are an error;
- sets and tuples: sorted lists (sets by their canonical JSON text) and lists;
- any other cycle: `{"$cycle": "<path>"}` instead of recursing forever.
"""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

from harness.targets.equality import JSON

# An object's attribute that points back up a tree (GorillaFileSystem's `Directory.parent`).
PARENT_ATTRIBUTE = "parent"
MAX_PARENT_DEPTH = 256


def public_attributes(instance: Any) -> dict[str, Any]:
    """What BFCL's state checker compares: `vars(instance)` without `_` names."""
    return {k: v for k, v in vars(instance).items() if not k.startswith("_")}


def public_state(instance: Any) -> dict[str, JSON]:
    """The canonical JSON of `instance`'s public attributes."""
    return {
        name: to_canonical(value, (name,), set())
        for name, value in sorted(public_attributes(instance).items())
    }


def parent_path(directory: Any) -> str | None:
    """The path of `directory` from the root, following `parent` links (cycle-safe)."""
    if directory is None:
        return None
    names: list[str] = []
    seen: set[int] = set()
    node = directory
    while node is not None and id(node) not in seen and len(names) < MAX_PARENT_DEPTH:
        seen.add(id(node))
        names.append(str(getattr(node, "name", "?")))
        node = getattr(node, PARENT_ATTRIBUTE, None)
    names.reverse()
    # the root is named "/" and is the first name; the rest are joined under it
    if names and names[0] == "/":
        return "/" + "/".join(names[1:])
    return "/".join(names)


def to_canonical(value: Any, path: tuple[str, ...], active: set[int]) -> JSON:
    """`value` as JSON; `active` holds the ids of the containers on the current path."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        # JSON has no NaN or infinity; write them as strings so equal states stay equal
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    key = id(value)
    if key in active:
        return {"$cycle": ".".join(path)}
    active.add(key)
    try:
        if isinstance(value, dict):
            out: dict[str, JSON] = {}
            for k, v in value.items():
                name = str(k)
                if name in out:
                    raise ValueError(f"{'.'.join(path)}: keys {k!r} and {name!r} collide")
                out[name] = to_canonical(v, (*path, name), active)
            return dict(sorted(out.items()))
        if isinstance(value, list | tuple):
            return [to_canonical(v, (*path, str(i)), active) for i, v in enumerate(value)]
        if isinstance(value, set | frozenset):
            items = [to_canonical(v, (*path, "*"), active) for v in value]
            return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
        if hasattr(value, "__dict__"):
            fields: dict[str, JSON] = {}
            for name, v in sorted(public_attributes(value).items()):
                if name == PARENT_ATTRIBUTE:
                    fields[name] = parent_path(v)
                else:
                    fields[name] = to_canonical(v, (*path, name), active)
            return fields
        return repr(value)
    finally:
        active.discard(key)

"""The port's store reads made cheaper, in this process, without changing what they return.

The port's tool classes are `inspect_ai` `StoreModel`s: every read of one of their fields
goes through `StoreModel.__getattribute__`, which looks the store up. Telecom's grader
replays sync the device with the line after every call (`Environment.sync_tools`), and
those syncs read the databases field by field: the bare work of the exhaustive open
world's telecom tools made 6.5 million such reads (`python bench/bare_work.py --target
tau2-telecom`, its profile). Two things each read did are replaced here, in memory:

1. **One pydantic adapter per field type** (`adapters_reused`). A read of a field that does
   not hold a scalar (`db`, a telecom device, ...) goes through `_coerce_value`, which
   built a new `pydantic.TypeAdapter` of the field's type, validated the stored value with
   it, and dropped it (208,067 adapters of four field types in that bare work).
   `inspect_ai.util._store_model`'s global `TypeAdapter` becomes one that hands out one
   adapter per type, made by pydantic on the type's first read and kept for the process,
   as pydantic's performance tips advise ("TypeAdapter instantiated once": each
   instantiation constructs a new validator and serializer,
   https://docs.pydantic.dev/latest/concepts/performance/). The validation is the
   adapter's own, so a read returns what it returned before:

   - The field types are classes the port defines (`TelecomDB`, `FlightDB`, ...), resolved
     when their models were built; an adapter of one does not depend on where it is made.
     (A string or forward reference could: `TypeAdapter` resolves those in its caller's
     namespace. `tests/test_tau2.py` checks that no field of the port's tool classes has
     one.)
   - A type that cannot be a dict key, or an adapter that cannot be made, is built each
     time, exactly as before: the error reaches `_coerce_value`, which returns the raw
     value.
   - A type equal to one seen before (`dict[str, X]` written twice) shares its adapter: a
     TypeAdapter holds nothing of the values it validated.

2. **The field names read from the class directly** (`fields_read_directly`). Each read,
   and each of the reads it makes of the instance's own attributes (`store`, `instance`,
   `_ns_name`, ...), asked `self.__class__.model_fields`: pydantic's deprecated-access
   descriptor, which calls a classmethod that returns
   `getattr(cls, "__pydantic_fields__", {})` (3.1 million calls, 2.2 s of that profile).
   `StoreModel.__getattribute__` becomes the same method with that expression in its
   place, and nothing else changed. This replaces `inspect_ai`'s own method, so it is
   done only where both are the code it was written against: `StoreModel`'s
   `__getattribute__` and pydantic's `model_fields` are compared, by the SHA-256 of their
   source, with inspect-ai 0.3.285's and pydantic 2.13.4's (the versions `pyproject.toml`
   pins), and any other version is left alone (`tests/test_tau2.py` fails then, so that
   an upgrade is a decision: check the new method and update the digests).
   `model_fields` is found on `BaseModel` by every `StoreModel` subclass the port defines
   (the same test checks that none shadows it).

No file changes: `inspect_ai` and pydantic stay as installed, and only this process's
module global and class attribute are replaced (once; a second call finds them replaced).
A mutant of the port's tools touches neither. `tests/test_tau2.py` compares grades, results
and snapshots with and without, in fresh processes; docs/adapters.md lists what adapters
change in their benchmark's process.
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

# The first 16 hex digits of the SHA-256 of `inspect.getsource` of inspect-ai 0.3.285's
# `StoreModel.__getattribute__` and of pydantic 2.13.4's `BaseModel.model_fields` (its
# classmethod's function): the code `_direct_reads` was written against.
GETATTRIBUTE_SOURCE = "7233ed1a467a617f"
MODEL_FIELDS_SOURCE = "7cdde549b5e66209"


class _ReusedAdapters:
    """Called as `TypeAdapter(field_type)`: the one adapter of `field_type` in this process."""

    def __init__(self, make: Any):
        self.make = make  # pydantic.TypeAdapter
        self.adapters: dict[Any, Any] = {}

    def __call__(self, field_type: Any) -> Any:
        try:
            return self.adapters[field_type]
        except KeyError:
            pass
        except TypeError:  # unhashable: not kept, built as before
            return self.make(field_type)
        adapter = self.make(field_type)  # an error reaches the caller, nothing is kept
        return self.adapters.setdefault(field_type, adapter)


def adapters_reused() -> None:
    """Make `StoreModel`'s reads reuse one adapter per field type (module docstring, 1)."""
    import inspect_ai.util._store_model as store_model

    if not isinstance(store_model.TypeAdapter, _ReusedAdapters):
        store_model.TypeAdapter = _ReusedAdapters(store_model.TypeAdapter)


def source_digest(function: Any) -> str:
    """The first 16 hex digits of the SHA-256 of `function`'s source."""
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]


def _direct_reads(store_model: type) -> Any:
    """inspect-ai 0.3.285's `StoreModel.__getattribute__` (its comments too), with
    `self.__class__.model_fields` replaced by what pydantic 2.13.4's `model_fields` returns
    for that class, and `super()` spelled out (the function is not defined in the class)."""
    no_fields: dict[str, Any] = {}

    def __getattribute__(self, name: str) -> Any:
        # sidestep dunders and pydantic fields
        if name.startswith("__") or name.startswith("model_"):
            return object.__getattribute__(self, name)
        # handle model_fields (except 'store' and 'namespace') by reading the store
        elif name in getattr(
            object.__getattribute__(self, "__class__"), "__pydantic_fields__", no_fields
        ) and name not in ["store", "instance"]:
            store_key = self._ns_name(name)
            if store_key in self.store:
                return self._get_and_coerce_field(name)
            else:
                return object.__getattribute__(self, name)
        # default to super
        else:
            return super(store_model, self).__getattribute__(name)

    __getattribute__.direct_reads = True  # type: ignore[attr-defined]
    __getattribute__.replaced = store_model.__dict__["__getattribute__"]  # type: ignore[attr-defined]
    return __getattribute__


def fields_read_directly() -> bool:
    """Make `StoreModel`'s reads find its field names without pydantic's deprecated-access
    descriptor (module docstring, 2), if both are the code this was written against.
    Whether they are (now or by an earlier call)."""
    from inspect_ai.util._store_model import StoreModel
    from pydantic import BaseModel

    current = StoreModel.__dict__["__getattribute__"]
    if getattr(current, "direct_reads", False):
        return True
    if (
        source_digest(current) != GETATTRIBUTE_SOURCE
        or source_digest(BaseModel.__dict__["model_fields"].fget.__func__) != MODEL_FIELDS_SOURCE
    ):
        return False
    StoreModel.__getattribute__ = _direct_reads(StoreModel)  # type: ignore[method-assign]
    return True

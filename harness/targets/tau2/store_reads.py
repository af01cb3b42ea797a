"""One pydantic adapter per field type for the port's store reads, in this process.

The port's tool classes are `inspect_ai` `StoreModel`s. Every read of one of their fields
that does not hold a scalar (`db`, a telecom device, ...) goes through
`StoreModel._coerce_value`, which builds a new `pydantic.TypeAdapter` of the field's type,
validates the stored value with it, and drops it. Telecom's grader replays sync the device
with the line after every call (`Environment.sync_tools`), and those syncs read the
databases field by field: the bare work of the exhaustive open world's telecom tools
built 208,067 adapters (`python bench/bare_work.py --target tau2-telecom`, its profile) of
four field types.

`adapters_reused()` gives `inspect_ai.util._store_model` (the module whose global
`TypeAdapter` that method calls) a `TypeAdapter` that hands out one adapter per type, made
by pydantic on the type's first read and kept for the process, as pydantic's performance
tips advise ("TypeAdapter instantiated once": each instantiation constructs a new
validator and serializer, https://docs.pydantic.dev/latest/concepts/performance/). The
validation is the adapter's own, so a read returns what it returned before:

- The field types are classes the port defines (`TelecomDB`, `FlightDB`, ...), resolved
  when their models were built; an adapter of one does not depend on where it is made.
  (A string or forward reference could: `TypeAdapter` resolves those in its caller's
  namespace. `tests/test_tau2.py` checks that no field of the port's tool classes has one.)
- A type that cannot be a dict key, or an adapter that cannot be made, is built each time,
  exactly as before: the error reaches `_coerce_value`, which returns the raw value.
- A type equal to one seen before (`dict[str, X]` written twice) shares its adapter: a
  TypeAdapter holds nothing of the values it validated.

No file changes: `inspect_ai` stays as installed, and only this process's module global is
replaced (once; a second call finds it replaced). A mutant of the port's tools does not
touch `inspect_ai`; the rows are the same with and without (`same_as`, registered blind).
"""

from __future__ import annotations

import threading
from typing import Any

STORE_MODEL = "inspect_ai.util._store_model"


class _ReusedAdapters:
    """Called as `TypeAdapter(field_type)`: the one adapter of `field_type` in this process."""

    def __init__(self, make: Any):
        self.make = make  # pydantic.TypeAdapter
        self.adapters: dict[Any, Any] = {}
        self.lock = threading.Lock()

    def __call__(self, field_type: Any) -> Any:
        try:
            return self.adapters[field_type]
        except KeyError:
            pass
        except TypeError:  # unhashable: not kept, built as before
            return self.make(field_type)
        adapter = self.make(field_type)  # an error reaches the caller, nothing is kept
        with self.lock:
            return self.adapters.setdefault(field_type, adapter)


def adapters_reused() -> None:
    """Make `StoreModel`'s reads reuse one adapter per field type (module docstring)."""
    import inspect_ai.util._store_model as store_model

    if not isinstance(store_model.TypeAdapter, _ReusedAdapters):
        store_model.TypeAdapter = _ReusedAdapters(store_model.TypeAdapter)

"""AgentDojo's wall clock, fixed for the process.

Two of AgentDojo's tool modules read the wall clock: `email_client` stamps a new email's
`timestamp` and `cloud_drive_client` a file's `last_modified` with `datetime.datetime.now()`.
The snapshots and results mask those paths (`CLOCK_PATHS` of the adapter), but a stamp can
still reach a ledger row through free text: a mutant that drops `owner` from a new
`CloudDriveFile` is refused with pydantic's message quoting the file's fields, the stamp
among them, so two runs of the same pair wrote two rows. `fix_clock` rebinds the `datetime`
name of exactly those modules to a copy of the module whose `datetime.now()` (and `today()`,
`utcnow()`) answers `FIXED_NOW`, in memory, for the process and its forked workers; mutants
of those modules are defined in the same globals and read the same clock. `FIXED_NOW` lies
after every date of the suites' data, as the real clock does, so whatever orders records by
time orders them as before.
"""

from __future__ import annotations

import datetime
import importlib
import types

FIXED_NOW = datetime.datetime(2026, 1, 1, 12, 0, 0)
CLOCK_MODULES = (
    "agentdojo.default_suites.v1.tools.email_client",
    "agentdojo.default_suites.v1.tools.cloud_drive_client",
)


class FixedClock(datetime.datetime):
    """`datetime.datetime` whose clock readings are `FIXED_NOW` (a plain datetime)."""

    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> datetime.datetime:  # type: ignore[override]
        if tz is None:
            return FIXED_NOW
        return FIXED_NOW.replace(tzinfo=datetime.UTC).astimezone(tz)

    @classmethod
    def today(cls) -> datetime.datetime:  # type: ignore[override]
        return FIXED_NOW

    @classmethod
    def utcnow(cls) -> datetime.datetime:  # type: ignore[override]
        return FIXED_NOW


def fixed_datetime_module() -> types.ModuleType:
    """A copy of the `datetime` module whose `datetime` class is `FixedClock`."""
    shim = types.ModuleType("datetime", "datetime, its clock fixed by contract-harness")
    for name, value in vars(datetime).items():
        if not name.startswith("__"):
            setattr(shim, name, value)
    shim.datetime = FixedClock  # type: ignore[attr-defined]
    return shim


def fix_clock() -> None:
    """Rebind `datetime` in each of `CLOCK_MODULES` (once; idempotent)."""
    shim = None
    for name in CLOCK_MODULES:
        module = importlib.import_module(name)
        if module.datetime is datetime:
            shim = shim or fixed_datetime_module()
            module.datetime = shim

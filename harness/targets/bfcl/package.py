"""The installed `bfcl-eval` package as the BFCL targets see it: where it is, its stateful
classes (imported once per process and remembered for `isolation`), its tasks and its
version, and the one-line error naming the install command when it is missing. Below both
the adapter and the grader."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from harness.errors import Problem, UserError
from harness.targets.bfcl import isolation
from harness.targets.bfcl.tasks import BfclTask, load_tasks

CONTRACTS_ROOT = Path(__file__).resolve().parent / "contracts"
DISTRIBUTION = "bfcl-eval"
PINNED_VERSION = "2026.3.23"
INSTALL_COMMAND = f"python3 -m pip install --no-deps {DISTRIBUTION}=={PINNED_VERSION}"
MODULE_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
FUNC_DOC_DIR = "bfcl_eval/data/multi_turn_func_doc"


@dataclass(frozen=True)
class ApiClass:
    """One stateful class of BFCL multi-turn: its module, class name and function docs."""

    module: str
    cls: str
    func_doc: str


CLASSES: dict[str, ApiClass] = {
    "file_system": ApiClass("gorilla_file_system", "GorillaFileSystem", "gorilla_file_system"),
    "message": ApiClass("message_api", "MessageAPI", "message_api"),
    "posting": ApiClass("posting_api", "TwitterAPI", "posting_api"),
    "ticket": ApiClass("ticket_api", "TicketAPI", "ticket_api"),
    "trading": ApiClass("trading_bot", "TradingBot", "trading_bot"),
    "travel": ApiClass("travel_booking", "TravelAPI", "travel_booking"),
    "vehicle": ApiClass("vehicle_control", "VehicleControlAPI", "vehicle_control"),
}
# Classes whose own default state is empty (nothing for their tools to act on): their
# default environment is this task's config (the largest for the class; the file system's
# is the first task's, whose files several other tasks share).
DEFAULT_CONFIG_TASK = {
    "file_system": "multi_turn_base_0",
    "posting": "multi_turn_base_77",
    "ticket": "multi_turn_base_48",
    "travel": "multi_turn_base_178",
}


def missing_package() -> UserError:
    return UserError(
        Problem(
            DISTRIBUTION,
            "installed packages",
            f"{DISTRIBUTION} is not installed (the BFCL targets need it)",
            f"run `{INSTALL_COMMAND}` (without its declared dependencies: README)",
        )
    )


def package_root() -> Path:
    """The site-packages folder holding `bfcl_eval/` (sources and data are relative to it)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or spec.origin is None:
        raise missing_package()
    return Path(spec.origin).resolve().parent.parent


@cache
def api_class(slug: str) -> type:
    """The class of target `slug`, imported once per process."""
    package_root()  # the one-line error when the package is missing
    module = importlib.import_module(f"{MODULE_PREFIX}.{CLASSES[slug].module}")
    isolation.remember(module)
    return getattr(module, CLASSES[slug].cls)


def bfcl_tasks() -> dict[str, BfclTask]:
    return load_tasks(package_root() / "bfcl_eval")


def bfcl_version() -> str:
    try:
        return f"{DISTRIBUTION} {importlib.metadata.version(DISTRIBUTION)}"
    except importlib.metadata.PackageNotFoundError:
        raise missing_package() from None

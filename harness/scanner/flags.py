"""What the scanner reports: the checks, a flag, the error, and the vocabulary the checks share
(mutating methods, log calls, failure text)."""

from __future__ import annotations

import ast
import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from harness.defects import DefectClass
from harness.errors import HarnessError


class ScanCheck(StrEnum):
    LITERAL_SUCCESS_RETURN = "literal_success_return"
    COMMENTED_OUT_GUARD = "commented_out_guard"
    PARAMETER_ONLY_LOGGED = "parameter_only_logged"
    FALSY_TRUTHINESS_TEST = "falsy_truthiness_test"
    VERB_PAIR_ASYMMETRY = "verb_pair_asymmetry"
    OPTIONAL_BOOL_TRUTHINESS = "optional_bool_truthiness"
    UNUSED_PARAMETER = "unused_parameter"


class ScanFlag(BaseModel):
    """One lead for a reviewer: where the pattern is and what it may mean."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: ScanCheck
    file: str
    function: str
    line: int
    class_hint: DefectClass
    message: str


class ScanError(HarnessError, ValueError):
    """The scanned source cannot be parsed or read."""


_CLASS_HINTS: dict[ScanCheck, DefectClass] = {
    ScanCheck.LITERAL_SUCCESS_RETURN: DefectClass.PHANTOM_EFFECT,
    ScanCheck.COMMENTED_OUT_GUARD: DefectClass.UNENFORCED_PRECONDITION,
    ScanCheck.PARAMETER_ONLY_LOGGED: DefectClass.IGNORED_ARGUMENT,
    ScanCheck.FALSY_TRUTHINESS_TEST: DefectClass.IGNORED_ARGUMENT,
    ScanCheck.VERB_PAIR_ASYMMETRY: DefectClass.INVARIANT_BREAK,
    ScanCheck.OPTIONAL_BOOL_TRUTHINESS: DefectClass.IGNORED_ARGUMENT,
    ScanCheck.UNUSED_PARAMETER: DefectClass.IGNORED_ARGUMENT,
}


FuncNode = ast.FunctionDef | ast.AsyncFunctionDef


# Methods that mutate the container they are called on.
_MUTATORS = frozenset(
    {"append", "appendleft", "extend", "extendleft", "insert", "pop", "popitem", "popleft"}
    | {"remove", "clear", "update", "setdefault", "add", "discard", "sort", "reverse"}
    | {"difference_update", "intersection_update", "symmetric_difference_update"}
)


# Calls whose result is a new object, so mutating it is local bookkeeping, not a state write.
_FRESH_CALLS = frozenset(
    {"list", "dict", "set", "tuple", "frozenset", "bytearray", "copy", "deepcopy"}
    | {"defaultdict", "OrderedDict", "Counter", "deque", "sorted", "reversed"}
    | {"split", "rsplit", "splitlines"}
)


_LOG_ROOTS = frozenset({"logging", "logger", "log", "_logger", "_log", "LOGGER", "LOG"})


_LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal"}
)


# Keyword arguments of print/logging calls that steer the call rather than fill the message.
_LOG_CONTROL_KEYWORDS = frozenset({"file", "sep", "end", "flush", "stacklevel", "exc_info"})


# Builtins that only reformat a value shown in a message (anything else may read state).
_PURE_FORMATTERS = frozenset({"str", "repr", "format", "len", "int", "float", "round", "abs"})


# str methods that keep a value "just text" when applied to an f-string.
_STR_METHODS = frozenset(
    {"strip", "lstrip", "rstrip", "upper", "lower", "title", "capitalize", "format", "encode"}
)


_FAILURE_TEXT = re.compile(
    r"\b(?:error|errors|fail|failed|fails|failure|invalid|cannot|unable|insufficient|denied|"
    r"forbidden|unauthori[sz]ed|rejected|refused|missing|must|already|not|no|none)\b|n't\b|"
    r"\bnot found\b|\bno such\b|\bdoes not exist\b",
    re.IGNORECASE,
)


_SUCCESS_KEYS = frozenset({"success", "ok", "succeeded", "done"})


_ERROR_KEYS = frozenset({"error", "errors", "err", "failure"})


_FALSY_BY_TYPE: dict[str, str] = {
    "int": "0",
    "float": "0.0",
    "str": "an empty string",
    "bytes": "empty bytes",
    "list": "an empty list",
    "List": "an empty list",
    "dict": "an empty dict",
    "Dict": "an empty dict",
    "set": "an empty set",
    "Set": "an empty set",
    "frozenset": "an empty set",
    "FrozenSet": "an empty set",
    "tuple": "an empty tuple",
    "Tuple": "an empty tuple",
}


_VERB_PAIRS: tuple[tuple[str, str], ...] = (
    ("book", "cancel"),
    ("reserve", "release"),
    ("freeze", "unfreeze"),
    ("lock", "unlock"),
    ("open", "close"),
    ("add", "remove"),
    ("create", "delete"),
    ("grant", "revoke"),
    ("enable", "disable"),
    ("subscribe", "unsubscribe"),
    ("check_in", "check_out"),
    ("start", "stop"),
    ("attach", "detach"),
    ("follow", "unfollow"),
    ("block", "unblock"),
    ("archive", "unarchive"),
    ("deposit", "withdraw"),
)


_GUARD_WORD = re.compile(r"\b(?:raise|assert)\b")


# Bounds the window search over long comment blocks so a scan stays fast.
_MAX_GUARD_ATTEMPTS = 400


_SNIPPET_LIMIT = 70

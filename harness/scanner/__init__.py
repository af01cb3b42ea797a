"""Static scanner: AST checks over tool source that raise flags for a person to look at.

The scanner reads source text with `ast` and `tokenize` only. It never imports, compiles to
bytecode or runs the scanned code, so a module whose body would raise, write a file or open a
socket is scanned like any other. Its output is a list of `ScanFlag`s: leads for a reviewer,
never verdicts. Each flag carries the `DefectClass` the pattern most often points at.

The seven checks:

``literal_success_return`` (hint: phantom_effect)
    In a *writer* function (one that stores to an attribute or subscript, deletes one, calls a
    mutating method such as ``append``/``pop``/``update`` on non-local data, or calls a writer
    function defined in the same module), a ``return`` of a fixed success value - a non-empty
    string, ``True``, a dict/list/tuple display of constants holding at least one string or
    ``True``, or an f-string whose placeholders are only parameter names - on a path with no
    state write before it. A write counts as "before"
    when it occurs earlier in the return's own block or in any enclosing block. Values that read
    as failures ("Error: ...", ``{"success": False}``, "already frozen") are not flagged.

``commented_out_guard`` (hint: unenforced_precondition)
    A run of full-line comments inside a function that, once the ``#`` and the common indentation
    are stripped, parses as Python containing a ``raise`` or an ``assert`` - e.g.
    ``# if amount > balance: raise InsufficientFunds()``. A commented ``if ...:`` followed by a
    commented ``raise`` at the same indentation is re-indented before parsing; a run mixing prose
    and code is searched for its longest parseable window.

``parameter_only_logged`` (hint: ignored_argument)
    An agent parameter whose every read sits in an f-string that only reaches a return value, a
    raised exception or a log line, or in the arguments of ``print``/``logging.*``/``logger.*``/
    ``log.*``/``*.info()`` and friends. The argument is echoed back but never changes state or
    the decision. A read that looks something up inside the f-string (``f"{db.users[uid]}"``)
    is a real use. Unused parameters are not flagged here.

``falsy_truthiness_test`` (hint: ignored_argument)
    A truthiness test (``if p:``, ``while p``, ``not p``, ``p and ...``/``p or default``,
    ``x if p else y``, ``assert p``, ``bool(p)``) of an agent parameter annotated as a type with
    a meaningful falsy value: int, float, str, bytes, list, dict, set, tuple, frozenset (or their
    typing aliases), optionally wrapped in ``Optional``/``X | None``/``Union``. ``bool`` and
    other classes are not flagged. The test treats ``0``/``""``/``[]`` like a missing value.
    ``p or []`` (the fallback equals the falsy value) is harmless and not flagged.

``optional_bool_truthiness`` (hint: ignored_argument)
    The same truthiness tests of an agent parameter annotated ``bool | None`` (``Optional[bool]``,
    ``Union[bool, None]``), where ``None`` means "leave as it is" and ``False`` is a value of its
    own: ``if recurring:`` skips an explicit ``False`` exactly as it skips ``None``. A plain
    ``bool`` is not flagged (its truthiness is its value); ``p or False`` is not flagged.

``unused_parameter`` (hint: ignored_argument)
    An agent parameter the body never reads (no load of its name anywhere in the function,
    nested functions included). Not flagged: names starting with ``_``, ``*args``/``**kwargs``,
    a function calling ``locals()``/``vars()``, and stubs (a body of only a docstring, ``pass``,
    ``...`` or a ``raise``) and ``@abstractmethod``/``@overload`` definitions.

``verb_pair_asymmetry`` (hint: invariant_break)
    Functions in one scope (the module, or one class) named by complementary verbs - book/cancel,
    reserve/release, freeze/unfreeze, lock/unlock, open/close, add/remove, create/delete,
    grant/revoke, enable/disable, subscribe/unsubscribe, check_in/check_out, start/stop,
    attach/detach, follow/unfollow, block/unblock, archive/unarchive, deposit/withdraw - are
    paired: by the rest of the name, or by verb alone when that is unambiguous. For each pair,
    the fields one side writes (attribute names, and string keys of dict-shaped records,
    including writes made by same-module helpers it calls by name) are compared with everything
    the other side touches (reads or writes, also through one level of helpers). A field one
    side writes and the other never touches is flagged on the side that ignores it.

Injected parameters (environment objects filled by the harness, e.g. ``bank``) and
``self``/``cls`` are never treated as agent parameters.

Layout: `flags` (what a flag is), `model` (the parsed module and its state writes), one
module per check (`literal_returns`, `commented_guards`, `logged_only`, `falsy_tests`,
`optional_bool`, `unused_parameters`, `verb_pairs`) and `scan` (the entry points);
`as_checker` runs the scanner as the `static-scanner` checker.
"""

from harness.scanner.flags import ScanCheck, ScanError, ScanFlag
from harness.scanner.scan import scan_files, scan_source, scan_target

__all__ = ["ScanCheck", "ScanError", "ScanFlag", "scan_files", "scan_source", "scan_target"]

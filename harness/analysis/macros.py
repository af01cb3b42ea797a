"""LaTeX macro names for report numbers, so a paper cites `\\RecallMPhantomLB`, not a copy.

Naming scheme: `\\<Table><Row><Statistic>`, ASCII letters only. A name such as an operator,
tool, arm or cause becomes a word by `macro_word`:
  - split at every character that is not an ASCII letter or digit;
  - the first part and every part after `_` get an upper-case first letter (snake_case →
    CamelCase: `no_clause` → `NoClause`);
  - a part after any other separator (`-`, `/`, `.`) is kept as written, except that a part
    in capitals of two letters or more is title-cased (`PHANTOM` → `Phantom`);
  - each digit becomes its English name (`2` → `Two`); other characters are dropped.
Examples: `M-PHANTOM` → `MPhantom`; `CR-core/ReplaceBinaryOperator_Add_Sub` →
`CRcoreReplaceBinaryOperatorAddSub`; `NC-same-value` → `NCsamevalue`.
A name produced twice gets a suffix `B`, `C`, ... in order of appearance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DIGITS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")
MACRO_NAME = re.compile(r"^[A-Za-z]+$")
_PART = re.compile(r"([^A-Za-z0-9]*)([A-Za-z0-9]+)")


def _letters(part: str) -> str:
    return "".join(DIGITS[int(ch)] if ch.isdigit() else ch for ch in part)


def macro_word(name: str) -> str:
    """`name` as letters only (the scheme in the module docstring)."""
    words = []
    for index, (separator, part) in enumerate(_PART.findall(name)):
        if index == 0 or "_" in separator:
            part = part[0].upper() + part[1:]
        elif len(part) > 1 and part.isalpha() and part.isupper():
            part = part.title()
        words.append(_letters(part))
    return "".join(words)


def _suffix(index: int) -> str:
    """1 → B, 2 → C, ..., 25 → Z, 26 → BA: letters only, never empty for index >= 1."""
    letters = ""
    while True:
        index, rest = divmod(index, 26)
        letters = chr(ord("A") + rest) + letters
        if index == 0:
            return letters


def unique_names(names: Iterable[str]) -> list[str]:
    """The names, a repeated one suffixed `B`, `C`, ... so that every name is new."""
    taken: set[str] = set()
    out = []
    for name in names:
        candidate, index = name, 0
        while candidate in taken:
            index += 1
            candidate = name + _suffix(index)
        taken.add(candidate)
        out.append(candidate)
    return out


def render_macros(entries: Iterable[tuple[str, str]], header: Iterable[str]) -> str:
    """`\\newcommand{\\Name}{value}` per (name, value), after `%` comment lines."""
    entries = list(entries)
    names = unique_names(name for name, _ in entries)
    for name in names:
        if not MACRO_NAME.match(name):
            raise ValueError(f"{name!r} is not a LaTeX command name (letters only)")
    lines = [f"% {line}" for line in header]
    lines += [
        f"\\newcommand{{\\{name}}}{{{value}}}"
        for name, (_, value) in zip(names, entries, strict=True)
    ]
    return "\n".join(lines) + "\n"

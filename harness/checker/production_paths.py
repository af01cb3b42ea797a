"""Production-path mutations: what real agent stacks do to an artifact's bytes between the
tool call that issued it and the call that hands it back.

Each is a small pure function of the string. One that has nothing to act on (a short
value, a value without a query string) returns it unchanged; the checker never uses an
unchanged value as an integrity probe, since it tests nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, unquote

# A tool-argument input limit of the kind agent frameworks apply to long strings.
INPUT_LIMIT = 64
# RFC 2045's line length, the width at which soft line breaks get inserted.
WRAP_WIDTH = 76
# How much of a link a chat renderer shows before the ellipsis.
LINK_TEXT_CHARS = 40
ELLIPSIS = "…"


def truncate(value: str, limit: int = INPUT_LIMIT) -> str:
    """The value cut at an input limit."""
    return value[:limit]


def soft_wrap(value: str, width: int = WRAP_WIDTH) -> str:
    """A line break inserted every `width` characters, as a renderer wraps a long line."""
    return "\n".join(value[i : i + width] for i in range(0, len(value), width)) if value else value


def percent_recode(value: str) -> str:
    """Percent-escapes decoded when there are any (`%2F` -> `/`), else reserved characters
    encoded (`"` -> `%22`, `/` -> `%2F`): the two ways a URL gets "normalised" in transit."""
    decoded = unquote(value)
    return decoded if decoded != value else quote(value, safe="")


def reorder_query(value: str) -> str:
    """The query parameters in reverse order; the same parameters, other bytes."""
    base, mark, query = value.partition("?")
    if not mark:
        return value
    fragment = ""
    if "#" in query:
        query, _, fragment = query.partition("#")
        fragment = "#" + fragment
    return base + "?" + "&".join(reversed(query.split("&"))) + fragment


def link_text(value: str, visible: int = LINK_TEXT_CHARS) -> str:
    """The rendered link text pasted instead of the link: a visible prefix and an ellipsis."""
    return value if len(value) <= visible else value[:visible] + ELLIPSIS


PRODUCTION_PATHS: dict[str, Callable[[str], str]] = {
    "truncate": truncate,
    "soft_wrap": soft_wrap,
    "percent_recode": percent_recode,
    "reorder_query": reorder_query,
    "link_text": link_text,
}

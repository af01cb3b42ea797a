"""Evaluator → tasks: the basis on which a task is exposed to a defect, and the task's oracle
grounding. Pure functions over fields and read sites.

Basis of (defect, task), the strongest resolved evidence first:
- `exact_field`: a state read at or below a defect field (`x.*.memo` reads `x.*.memo`; a
  field `x.*`, an element the tool wrote or should have, is read by reading `x`);
- `collection_only`: a state read of a proper prefix of a field and of no field itself
  (`len(post.x)` for the field `x.*.memo`);
- `whole_state_hash`: the whole state compared, hashed or diffed;
- `unresolved`: a read the extractor could not name (forced in: it only widens);
- `not_exposed`: none of these.
The four exposed bases are never pooled; a count is a bound only if it has no unresolved row.

Grounding of a task: `state_grounded` (reads only state), `transcript_grounded` (only the
agent's output or the tools' returned text), `mixed` (both), `ungrounded` (reads nothing:
the evaluator returns a constant).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from harness.trace.fields import FieldPath, normalise
from harness.trace.readsites import ReadSite, SiteKind


class Basis(StrEnum):
    EXACT_FIELD = "exact_field"
    COLLECTION_ONLY = "collection_only"
    WHOLE_STATE_HASH = "whole_state_hash"
    UNRESOLVED = "unresolved"
    NOT_EXPOSED = "not_exposed"

    @property
    def exposed(self) -> bool:
        return self is not Basis.NOT_EXPOSED


EXPOSED_BASES = (
    Basis.EXACT_FIELD,
    Basis.COLLECTION_ONLY,
    Basis.WHOLE_STATE_HASH,
    Basis.UNRESOLVED,
)


class Grounding(StrEnum):
    STATE = "state_grounded"
    TRANSCRIPT = "transcript_grounded"
    MIXED = "mixed"
    UNGROUNDED = "ungrounded"


def _match(a: Sequence[str], b: Sequence[str]) -> bool:
    return len(a) == len(b) and all(x == y or "*" in (x, y) for x, y in zip(a, b, strict=True))


def matching_sites(
    fields: Iterable[FieldPath], sites: Iterable[ReadSite]
) -> dict[Basis, list[ReadSite]]:
    """The read sites behind each basis (a site may back only one)."""
    # a field that is any element of a collection (`x.*`) is read by reading the
    # collection's elements (`v in post.x`, `post.x == [...]`): it is the collection path
    fields = [f[:-1] if f[-1:] == ("*",) and len(f) > 1 else f for f in fields]
    out: dict[Basis, list[ReadSite]] = {b: [] for b in EXPOSED_BASES}
    for site in sites:
        if site.kind is SiteKind.WHOLE_STATE:
            out[Basis.WHOLE_STATE_HASH].append(site)
        elif site.kind is SiteKind.UNRESOLVED:
            out[Basis.UNRESOLVED].append(site)
        elif site.kind is SiteKind.STATE and site.path:
            read = normalise(site.path)
            if any(len(read) >= len(f) and _match(read[: len(f)], f) for f in fields):
                out[Basis.EXACT_FIELD].append(site)
            elif any(len(read) < len(f) and _match(read, f[: len(read)]) for f in fields):
                out[Basis.COLLECTION_ONLY].append(site)
    return out


def basis_of(matches: dict[Basis, list[ReadSite]]) -> Basis:
    return next((b for b in EXPOSED_BASES if matches[b]), Basis.NOT_EXPOSED)


def grounding_of(sites: Iterable[ReadSite]) -> Grounding:
    kinds = {s.kind for s in sites}
    state = bool(kinds & {SiteKind.STATE, SiteKind.WHOLE_STATE, SiteKind.UNRESOLVED})
    transcript = SiteKind.TRANSCRIPT in kinds
    if state and transcript:
        return Grounding.MIXED
    if transcript:
        return Grounding.TRANSCRIPT
    return Grounding.STATE if state else Grounding.UNGROUNDED

"""`same_as`: a new run decides every pair it shares with a published run exactly as that
run did. A deterministic claim about the shared pairs, not a statistical one: no interval.

Shared pairs: pairs of every arm kind (closed world, open world, controls, negative
controls) with the same pair id in both ledgers and in n in both (infra errors left out),
per scope as `harness.analysis.paired` splits them: toy, real, each benchmark of the real
targets, pooled. On each, every column of `DECISIONS` is compared, old against new; a
missing value (<NA>) equals a missing value and differs from any value, so a value
appearing from none is a change. How a row was obtained (timing, coverage reuse) and the
witness's wording are never compared.

The outcome of a `same_as` prediction (docs/workflow.md, "Predictions that change nothing"):
  - held       shared pairs, none of them changed;
  - failed     some shared pair changed (each named, with `column old→new`);
  - undecided  no shared pair, or the run is not there to compare with.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from harness.analysis.paired import scope_parts, shared_pairs

# The ledger frame's columns (harness.analysis.frame.COLUMNS) that say what was decided
# about a pair; status carries detected, undecided and in n, live and status carry escape.
DECISIONS = (
    "status",
    "live",
    "miss_cause",
    "class_matched",
    "grader_caught",
    "grader_task_ids",  # which tasks' verdicts flipped, not only whether one did
    "tool_verdict",
    "new_violations",
)


@dataclass(frozen=True)
class ChangedPair:
    """A shared pair decided otherwise: `column old→new` for each decision that differs."""

    pair_id: str
    changes: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.pair_id} ({self.said})"

    @property
    def said(self) -> str:
        """The changes, `; `-separated: new_violations' clause ids are comma-separated."""
        return "; ".join(self.changes)


@dataclass(frozen=True)
class SameTable:
    """Shared pairs of one scope, new run against old: how many, and those that changed
    (sorted by pair id)."""

    scope: str
    n: int
    changed: tuple[ChangedPair, ...]


def _value(value: object) -> object:
    return None if value is None or value is pd.NA or value != value else value  # NaN


def _word(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()  # as the ledger writes it
    return str(value)


def _changes(shared: pd.DataFrame) -> dict[str, tuple[str, ...]]:
    """`column old→new` for each decision that differs, by pair id, of the pairs that
    changed: worked out once for all the shared pairs, column by column."""
    out: dict[str, list[str]] = {}
    for column in DECISIONS:
        pairs = zip(
            shared["pair_id"], shared[f"{column}_old"], shared[f"{column}_new"], strict=True
        )
        for pair_id, old, new in pairs:
            old, new = _value(old), _value(new)
            if old != new:
                out.setdefault(str(pair_id), []).append(f"{column} {_word(old)}→{_word(new)}")
    return {pair_id: tuple(changes) for pair_id, changes in out.items()}


def _shared(new: pd.DataFrame, old: pd.DataFrame) -> pd.DataFrame:
    # objects, not categories: two runs' categories differ, and <NA> must compare as a value
    new, old = (f.astype({c: object for c in DECISIONS}) for f in (new, old))
    return shared_pairs(new, old, DECISIONS)


def same_tables(new: pd.DataFrame, old: pd.DataFrame) -> list[SameTable]:
    """One table per scope with shared pairs (toy, real, each real benchmark), then pooled,
    from two ledger frames (`ledger_frame`)."""
    shared = _shared(new, old)
    changes = _changes(shared)
    out = []
    for scope, part in scope_parts(shared):
        ids = sorted(str(i) for i in part["pair_id"] if str(i) in changes)
        out.append(SameTable(scope, len(part), tuple(ChangedPair(i, changes[i]) for i in ids)))
    return out


def same_as_outcome(table: SameTable | None) -> str:
    """held / failed / undecided by the module rule."""
    if table is None or not table.n:
        return "undecided"
    return "failed" if table.changed else "held"

"""The ledger: one JSON line per scored pair, append-only, flushed and fsynced per row.

Schema version `LEDGER_SCHEMA_VERSION` (4; the fields: docs/ledger.md). Rows of an older
version are read through `LedgerRow._migrate`, never rewritten. A row is written once, by
the single writer (the runner's parent process). A run killed mid-write leaves at most a
torn last line, which `open_ledger` cuts off before resuming, so that pair is simply run
again: no row is lost or duplicated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.checker.verdicts import DefectClass, ProbeRecord, Verdict, Witness

LEDGER_SCHEMA_VERSION = 4  # 2 added grader_caught, grader_tasks (null in version 1 rows);
# 3 added skipped_by_coverage and reused_runs (false and 0 in older rows); 4 added
# kill_vector, graded_clauses and new_violations[].probe (null in older rows: not recorded)
# How a row was obtained, not what it says: left out of `LedgerRow.comparable`.
HOW_OBTAINED = frozenset({"timing", "skipped_by_coverage", "reused_runs"})


class PairStatus(StrEnum):
    """THE place that knows the statuses (DESIGN.md, Scoring)."""

    DETECTED = "detected"
    MISSED = "missed"
    UNTESTABLE = "untestable"
    TIMEOUT = "timeout"
    CRASH = "crash"
    COMPILE_ERROR = "compile_error"
    INFRA_ERROR = "infra_error"

    @property
    def undecided(self) -> bool:
        """Counts in U of the evidence bounds."""
        return self in (
            PairStatus.UNTESTABLE,
            PairStatus.TIMEOUT,
            PairStatus.CRASH,
            PairStatus.COMPILE_ERROR,
        )

    @property
    def in_denominator(self) -> bool:
        return self is not PairStatus.INFRA_ERROR


class MissCause(StrEnum):
    NO_CLAUSE = "no_clause"
    PROBE_UNREVEALING = "probe_unrevealing"
    UNREACHED = "unreached"
    CHECKER_CRASH = "checker_crash"


class NewViolation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    clause_id: str
    defect_class: DefectClass | None
    probe: ProbeRecord | None = Field(
        default=None,
        description="The probe that revealed the violation: the last call of the clause's "
        "witness (null in rows before version 4: not recorded)",
    )


class Timing(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float
    started_at: str


class PairScore(BaseModel):
    """What scoring one pair decides (`runner.score_pair`, or an executor that saw the pair
    time out or crash): the row's fields from `status` on but `predicted` and `timing`,
    which the runner knows without scoring. Crosses from the scoring process to the writer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: PairStatus
    class_matched: bool | None = None
    new_violations: list[NewViolation] = Field(default_factory=list)
    tool_verdict: Verdict | None = None
    live: bool | None = None
    miss_cause: MissCause | None = None
    witness: Witness | None = None
    grader_caught: bool | None = None
    grader_tasks: list[str] = Field(default_factory=list)
    error: str | None = None
    skipped_by_coverage: bool = False  # scored without a worker (harness.execution.coverage)
    reused_runs: int = 0  # runs whose outcome was taken from the original
    kill_vector: list[int] | None = None
    graded_clauses: list[str] | None = None


class LedgerRow(BaseModel):
    """One scored pair. Everything but `timing` is a function of plan, seed and freeze."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = LEDGER_SCHEMA_VERSION
    pair_id: str
    mutant_id: str
    tool: str
    arm: str
    operator: str
    defect_class: DefectClass | None
    target: str
    target_version: str
    freeze_id: str
    post_hoc: bool = False
    status: PairStatus
    class_matched: bool | None = None
    new_violations: list[NewViolation] = Field(default_factory=list)
    tool_verdict: Verdict | None = None
    predicted: Verdict | None = Field(default=None, description="Negative controls only")
    live: bool | None = None
    miss_cause: MissCause | None = None
    witness: Witness | None = None
    grader_caught: bool | None = Field(
        default=None, description="Some task's utility verdict changed (targets with a grader)"
    )
    grader_tasks: list[str] = Field(
        default_factory=list, description="The tasks whose utility verdict the mutant changed"
    )
    error: str | None = None
    skipped_by_coverage: bool = Field(
        default=False,
        description="Scored from the original's runs without a worker: no run of the pair "
        "starts the mutated function (harness.execution.coverage)",
    )
    reused_runs: int = Field(
        default=0,
        description="Runs (liveness calls, grader replays or evaluations, the checker) whose "
        "outcome was taken from the original's instead of being run again",
    )
    kill_vector: list[int] | None = Field(
        default=None,
        description="Indices of the tool's liveness-corpus calls on which the mutant's "
        "observation differs from the original's (empty: not live); null: not recorded "
        "(rows before version 4, and pairs that never ran)",
    )
    graded_clauses: list[str] | None = Field(
        default=None,
        description="Clauses the checker graded on the mutated tool (CONFORMS or VIOLATES on "
        "at least one probe): the clauses that covered the mutant; null: not recorded",
    )
    timing: Timing

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: object) -> object:
        """Version 1 rows had no grader fields: they read as not graded (null, []); rows
        before version 3 were scored without coverage (false, 0, the fields' defaults). A
        row of a version newer than this harness knows is refused, not guessed at."""
        if not isinstance(data, dict):
            return data
        version = data.get("schema_version", LEDGER_SCHEMA_VERSION)
        if isinstance(version, int) and version > LEDGER_SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {version} is newer than this harness reads "
                f"({LEDGER_SCHEMA_VERSION}); install the harness that wrote it"
            )
        if version == 1:  # a v1 row read and dumped again holds the two fields as null and []
            data = {"grader_caught": None, "grader_tasks": [], **data}
        if isinstance(version, int) and version < 4:  # never recorded: null, never guessed
            data = {**data, "kill_vector": None, "graded_clauses": None}
        return data

    def comparable(self) -> dict[str, Any]:
        """The row without its timing and how it was obtained (`HOW_OBTAINED`): what must be
        identical across reruns, with coverage-guided scoring on or off, for any worker
        count, and across the ledger versions that have the same fields."""
        return self.model_dump(mode="json", exclude=set(HOW_OBTAINED) | {"schema_version"})


def read_rows(path: Path) -> Iterator[LedgerRow]:
    """The ledger's whole rows through the one validating parser
    (`harness.execution.run_folder.read_ledger`): a torn last line is skipped."""
    from harness.execution.run_folder import read_ledger

    yield from read_ledger(path).rows


class LedgerWriter:
    """Appends rows; `done` holds the pair ids already recorded (from earlier runs too) and
    `digest` the chained digest of every line (`run_folder.chain`). Opening cuts a torn last
    line; a symbolic link is refused, never followed."""

    def __init__(self, path: Path):
        from harness.execution.run_folder import open_nofollow, read_ledger

        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        read = read_ledger(path)
        self._fd = open_nofollow(path, os.O_WRONLY | os.O_CREAT)
        if read.torn is not None:  # a write cut by a kill: that pair is scored again
            os.ftruncate(self._fd, read.whole_bytes)
        self._size = read.whole_bytes
        os.lseek(self._fd, self._size, os.SEEK_SET)
        self.done: set[str] = read.pair_ids
        self.digest = read.digest
        self.rows = len(read.rows)

    def append(self, row: LedgerRow) -> None:
        from harness.execution.atomic import is_write_error, write_problem
        from harness.execution.run_folder import chain

        if row.pair_id in self.done:
            raise ValueError(f"pair {row.pair_id} is already in the ledger")
        line = (json.dumps(row.model_dump(mode="json"), sort_keys=True) + "\n").encode("utf-8")
        try:
            written = 0
            while written < len(line):
                written += os.write(self._fd, line[written:])
            os.fsync(self._fd)
        except OSError as exc:  # a full disk or a size limit: no torn line is left behind
            os.ftruncate(self._fd, self._size)
            os.lseek(self._fd, self._size, os.SEEK_SET)
            if is_write_error(exc):
                raise write_problem(self.path, exc) from None
            raise
        self._size += len(line)
        self.digest = chain(self.digest, line)
        self.rows += 1
        self.done.add(row.pair_id)

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> LedgerWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

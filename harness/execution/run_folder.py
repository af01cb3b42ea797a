"""The run folder (`results/<plan>/<run>/`) as something a hostile or careless hand may have
touched: one writer at a time, no symbolic links followed, one validating ledger parser,
and digests that let a reader prove the ledger and the caches are what the run wrote.

- **One run per folder.** `hold_run_folder` takes an exclusive `flock` on `<folder>/.lock`;
  the kernel releases it when the process ends however it ends (`kill -9` too), so a stale
  lock cannot outlive its holder. A second run is refused, naming the holder's pid.
- **No symbolic links.** The folder and every file of it are opened with `O_NOFOLLOW`: a
  ledger linked to another file is refused, never read, truncated or appended to.
- **One parser.** `read_ledger` is the only reader of ledger.jsonl (run, resume, report,
  compare, trace): a line that is not a row, or a `pair_id` seen on an earlier line, is a
  one-line error naming the line; a last line without its newline is a torn write (a kill)
  and is set aside, not parsed.
- **A ledger that proves it is whole.** Rows are chained: `d_0 = sha256("")`,
  `d_i = sha256(d_{i-1} || line_i)` over the exact bytes of each line. `harness run`
  writes the final digest, the row count and the SHA-256 of the drawn pair ids to run.json
  when the last pair is recorded; `ledger_state` compares a ledger with them.
- **Caches with digests.** baseline.json and coverage.json are written with their SHA-256
  in `digests.json`; a resume reads them only when they still match.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.errors import Problem, UserError
from harness.execution.ledger import LedgerRow

LOCK = ".lock"
DIGESTS = "digests.json"
EMPTY_CHAIN = hashlib.sha256(b"").hexdigest()


def chain(previous: str, line: bytes) -> str:
    """The ledger digest after one more line (its bytes, newline included)."""
    return hashlib.sha256(previous.encode("ascii") + line).hexdigest()


def pair_ids_digest(pair_ids: Iterable[str]) -> str:
    """SHA-256 of the sorted pair ids, one a line: what a whole ledger must hold."""
    return hashlib.sha256("".join(f"{p}\n" for p in sorted(pair_ids)).encode()).hexdigest()


def _symlink_problem(path: Path, what: str) -> UserError:
    return UserError(
        Problem(
            str(path),
            what,
            "is a symbolic link; the harness does not follow links inside results/",
            "replace the link with the file itself (or remove it and run the plan again)",
        )
    )


def refuse_symlinked_folder(folder: Path) -> None:
    """A run folder (or its plan folder) that is a symbolic link is refused."""
    for path in (folder, folder.parent):
        if path.is_symlink():
            raise _symlink_problem(path, "run folder")


def open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    """`os.open` that refuses a symbolic link at the last component (one-line error)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _symlink_problem(path, "file") from None
        raise


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, None when absent; a symbolic link is refused."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise UserError(Problem(str(path), "file", "is not a regular file", "remove it"))
        return handle.read()


# --- the lock ---------------------------------------------------------------------------


@contextmanager
def hold_run_folder(folder: Path) -> Iterator[None]:
    """Hold the run folder's exclusive lock for the block; a second holder is refused."""
    refuse_symlinked_folder(folder)
    path = folder / LOCK
    fd = open_nofollow(path, os.O_RDWR | os.O_CREAT)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another run"
            raise UserError(
                Problem(
                    str(folder),
                    "run folder",
                    f"is in use by {holder}",
                    "wait for that run to end (or stop it), then run again to resume",
                )
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock; so does the kernel on any death


# --- the one ledger parser ----------------------------------------------------------------


@dataclass
class LedgerRead:
    """A ledger as read: its whole rows, the 1-based number of a torn last line (or None),
    the chained digest of the whole lines and the byte length they take."""

    path: Path
    rows: list[LedgerRow] = field(default_factory=list)
    torn: int | None = None
    digest: str = EMPTY_CHAIN
    whole_bytes: int = 0

    @property
    def pair_ids(self) -> set[str]:
        return {row.pair_id for row in self.rows}


def _bad_line(path: Path, number: int, what: str) -> UserError:
    return UserError(
        Problem(
            str(path),
            f"line {number}",
            what,
            "restore the ledger from the run (or remove the line and run the plan again)",
        )
    )


def parse_ledger(path: Path, data: bytes) -> LedgerRead:
    read = LedgerRead(path)
    first_line: dict[str, int] = {}
    start = 0
    number = 0
    while start < len(data):
        number += 1
        end = data.find(b"\n", start)
        if end < 0:  # no newline: a write cut short by a kill
            read.torn = number
            break
        line = data[start : end + 1]
        try:
            row = LedgerRow.model_validate_json(line)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise _bad_line(
                path, number, f"not a ledger row ({where + ': ' if where else ''}{error['msg']})"
            ) from None
        if row.pair_id in first_line:
            raise _bad_line(
                path,
                number,
                f"pair {row.pair_id} is already on line {first_line[row.pair_id]} "
                "(two runs wrote one ledger?)",
            )
        first_line[row.pair_id] = number
        read.rows.append(row)
        read.digest = chain(read.digest, line)
        read.whole_bytes = end + 1
        start = end + 1
    return read


def read_ledger(path: Path) -> LedgerRead:
    """Every whole row of the ledger at `path` (absent: none), validated."""
    refuse_symlinked_folder(path.parent)
    data = read_bytes(path)
    return parse_ledger(path, data or b"")


# --- is the ledger whole? -----------------------------------------------------------------


def ledger_record(read: LedgerRead) -> dict[str, Any]:
    """What run.json records of a finished ledger."""
    return {"rows": len(read.rows), "sha256": read.digest}


def ledger_state(
    manifest: dict[str, Any], read: LedgerRead, expected: set[str] | None
) -> str | None:
    """None when nothing shows the ledger differs from what its run wrote; else one phrase,
    beginning `SHORT` (pairs missing) or `ALTERED` (rows changed), for every output.

    `expected` is the drawn corpus's pair ids when known. A run that has not ended is judged
    only on rows outside its corpus (its missing rows are its unfinished part)."""
    ended = manifest.get("ended_at") is not None
    ids = read.pair_ids
    if expected is not None:
        foreign = ids - expected
        if foreign:
            return f"ALTERED: {len(foreign)} rows of pairs the drawn corpus does not hold"
        if ended and len(ids) < len(expected):
            return f"SHORT: {len(ids)} of {len(expected)} drawn pairs in the ledger"
    total = manifest.get("pairs_total")
    if ended and isinstance(total, int) and len(ids) < total:
        return f"SHORT: {len(ids)} of {total} pairs in the ledger"
    recorded_ids = manifest.get("pair_ids_sha256")
    if ended and recorded_ids and pair_ids_digest(ids) != recorded_ids:
        return "ALTERED: its pair ids differ from those run.json recorded"
    record = manifest.get("ledger")
    if ended and isinstance(record, dict):
        if len(read.rows) < record.get("rows", 0):
            return f"SHORT: {len(read.rows)} of the {record['rows']} rows run.json recorded"
        if read.digest != record.get("sha256"):
            return "ALTERED: its rows differ from the digest run.json recorded at the end"
    return None


# --- caches with digests ------------------------------------------------------------------


def _digests(folder: Path) -> dict[str, str]:
    data = read_bytes(folder / DIGESTS)
    if data is None:
        return {}
    try:
        found = json.loads(data)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def record_digest(path: Path, data: bytes) -> None:
    """Note the SHA-256 of the bytes just written to `path` in its folder's digests.json."""
    from harness.execution.atomic import write_bytes

    digests = _digests(path.parent)
    digests[path.name] = hashlib.sha256(data).hexdigest()
    write_bytes(
        path.parent / DIGESTS, (json.dumps(digests, indent=1, sort_keys=True) + "\n").encode()
    )


def read_verified_json(path: Path) -> Any:
    """The JSON at `path` (None when absent), refused when its bytes differ from the digest
    recorded when the harness wrote it. A cache written before digests were recorded (no
    entry) is read as it is."""
    data = read_bytes(path)
    if data is None:
        return None
    recorded = _digests(path.parent).get(path.name)
    if recorded is not None and hashlib.sha256(data).hexdigest() != recorded:
        raise UserError(
            Problem(
                str(path),
                "digest",
                f"differs from the digest recorded in {DIGESTS} when the run wrote it "
                "(edited after the run?)",
                f"remove {path.name} (the run computes it again) or restore it",
            )
        )
    try:
        return json.loads(data)
    except ValueError as exc:
        raise UserError(
            Problem(str(path), "<top>", f"not JSON ({exc})", f"remove {path.name} and run again")
        ) from None

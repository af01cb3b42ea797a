"""All-or-nothing writes: every file and folder a command writes is written aside and
swapped in by rename, and whatever was written aside is removed on any exit (an error,
Ctrl-C, SIGTERM). A write that fails (a full disk, a file-size limit) is a `UserError`
naming the file and the cause, not a traceback.

A file is swapped in by one `os.replace`. A folder cannot replace a non-empty folder in one
rename(2), so `staged_folder` renames the old one aside, the new one in, then removes the
old, with SIGINT and SIGTERM held for those three steps: an interrupt lands before or after
the swap, never between (only `kill -9` could, and then both copies are on disk).
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.errors import Problem, UserError
from harness.execution.isolation import signals_held

# Write failures a user can act on; anything else is a bug and keeps its traceback.
WRITE_ERRNOS = {
    errno.ENOSPC: "free space on its disk",
    errno.EDQUOT: "free space under your disk quota",
    errno.EFBIG: "raise the file-size limit (ulimit -f) or free space",
    errno.EROFS: "write to a writable file system",
    errno.EACCES: "make its folder writable",
    errno.EPERM: "make its folder writable",
    errno.EIO: "check the disk",
}


def write_problem(path: Path | str, exc: OSError) -> UserError:
    """One line: the file that could not be written, the cause, and what to do."""
    cause = exc.strerror or str(exc)
    fix = WRITE_ERRNOS.get(exc.errno or 0, "check the disk and the folder's permissions")
    return UserError(
        Problem(
            str(path), "write", f"cannot be written ({cause}); nothing was left half-written", fix
        )
    )


def is_write_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS


def aside(path: Path) -> Path:
    """The name a file or folder is written under before it is swapped in."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` whole: written aside, fsynced, renamed in one step."""
    tmp = aside(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        if is_write_error(exc):
            raise write_problem(path, exc) from None
        raise
    except BaseException:
        _remove(tmp)
        raise


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


@contextmanager
def staged_folder(destination: Path) -> Iterator[Path]:
    """Yield an empty folder to fill; when the block ends normally it replaces
    `destination` whole. On any exit it leaves no staging folder behind, and on an error
    `destination` is as it was."""
    tmp = aside(destination)
    old = destination.with_name(f".{destination.name}.{os.getpid()}.old")
    _remove(tmp)
    try:
        tmp.mkdir(parents=True)
        yield tmp
        with signals_held():
            if destination.exists():
                os.rename(destination, old)
            os.rename(tmp, destination)
            _remove(old)
    except OSError as exc:
        if is_write_error(exc):
            raise write_problem(getattr(exc, "filename", None) or destination, exc) from None
        raise
    finally:
        _remove(tmp)
        if old.exists():  # the swap failed half-way: put the old folder back
            if not destination.exists():
                os.rename(old, destination)
            else:
                _remove(old)


@contextmanager
def removed_on_failure(*paths: Path) -> Iterator[None]:
    """Remove `paths` (files or folders this block creates) unless the block completes."""
    try:
        yield
    except BaseException:
        for path in paths:
            _remove(path)
        raise

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
    """The name a file or folder is written under before it is swapped in (hidden, and with
    the destination's suffix, so that a writer that goes by the suffix writes the same)."""
    return path.with_name(f".{os.getpid()}.tmp.{path.name}")


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


class Staging:
    """The files and folders one command writes, each written aside (`file`, `folder`) and
    swapped in together by `commit` with SIGINT and SIGTERM held; `discard` removes what was
    written aside. Use it through `all_or_nothing`."""

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []  # (aside, destination)
        self._removed: list[Path] = []

    def file(self, destination: Path) -> Path:
        """Where to write `destination`'s new content."""
        tmp = aside(destination)
        _remove(tmp)
        self._staged.append((tmp, destination))
        return tmp

    def folder(self, destination: Path) -> Path:
        """An empty folder to fill; it replaces `destination` whole."""
        tmp = self.file(destination)
        tmp.mkdir(parents=True)
        return tmp

    def staged(self, destination: Path) -> Path:
        """Where `destination`'s new content is being written."""
        return next(tmp for tmp, dest in self._staged if dest == destination)

    def remove(self, destination: Path) -> None:
        """`destination` is removed on commit (an output this run no longer writes)."""
        self._removed.append(destination)

    def commit(self) -> None:
        with signals_held():
            olds = []
            for tmp, destination in self._staged:
                if destination.is_dir() and not destination.is_symlink():
                    old = destination.with_name(f".{os.getpid()}.old.{destination.name}")
                    os.rename(destination, old)  # a folder cannot replace a folder in one step
                    olds.append(old)
                os.replace(tmp, destination)
            for path in [*olds, *self._removed]:
                _remove(path)
            self._staged.clear()

    def discard(self) -> None:
        for tmp, _ in self._staged:
            _remove(tmp)
        self._staged.clear()


@contextmanager
def all_or_nothing(name: Path | str) -> Iterator[Staging]:
    """A `Staging` committed when the block ends normally and discarded on any other exit;
    a write error becomes a one-line `UserError` naming the file (`name` when unknown)."""
    staging = Staging()
    try:
        yield staging
        staging.commit()
    except OSError as exc:
        if is_write_error(exc):
            raise write_problem(getattr(exc, "filename", None) or name, exc) from None
        raise
    finally:
        staging.discard()


@contextmanager
def staged_folder(destination: Path) -> Iterator[Path]:
    """Yield an empty folder to fill; when the block ends normally it replaces
    `destination` whole; on any other exit `destination` is as it was and nothing staged
    is left."""
    with all_or_nothing(destination) as staging:
        yield staging.folder(destination)


@contextmanager
def removed_on_failure(*paths: Path) -> Iterator[None]:
    """Remove `paths` (files or folders this block creates) unless the block completes."""
    try:
        yield
    except BaseException:
        for path in paths:
            _remove(path)
        raise

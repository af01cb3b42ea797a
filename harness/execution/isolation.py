"""Process lifetime rules: no process of a run outlives it, and signals end a run cleanly.

A scoring process (a forked pair child, a Dask batch host) calls `die_with_parent` first:
Linux `prctl(PR_SET_PDEATHSIG, SIGKILL)` via ctypes, so a parent killed by `kill -9` or the
out-of-memory killer takes its children along. A pair child then calls `limit_self`, the
backstop for when the parent is alive but cannot kill it (stopped, wedged): a wall-clock
alarm (`setitimer`, SIGALRM left at its default action, which ends the process) and a CPU
rlimit (SIGXCPU, then SIGKILL at the hard limit, which no handler can catch). Both lie
`backstop_seconds(timeout)` out, past the parent's own timeout, so in a healthy run the
parent always kills first and the row says `timeout` either way.

`interrupts_as_keyboard` makes SIGTERM act like Ctrl-C in the parent (KeyboardInterrupt),
and `signals_held` defers both around a ledger write, so a signal never tears a row.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import math
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def backstop_seconds(timeout: float) -> float:
    """When a pair child ends itself: later than the parent's timeout by a load margin."""
    return timeout * 1.25 + 2.0


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library, loaded once: a parent that calls this before forking spares every
    child the lookup (`find_library` runs ldconfig; about 3 ms a pair)."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def die_with_parent(expected_parent: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent ends; if the parent ended
    before the request took effect (the fork race), end now."""
    if sys.platform.startswith("linux"):
        if libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    # elsewhere there is no parent-death signal: the backstop of `limit_self` still holds
    if os.getppid() != expected_parent:
        os._exit(1)


def limit_self(timeout: float) -> None:
    """The pair child's own wall and CPU limits (`backstop_seconds`)."""
    seconds = backstop_seconds(timeout)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    cpu = math.ceil(seconds) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        cpu = min(cpu, hard - 1)
    resource.setrlimit(
        resource.RLIMIT_CPU, (cpu, cpu + 1 if hard == resource.RLIM_INFINITY else hard)
    )


def ignore_stop_signals() -> None:
    """A pair child leaves Ctrl-C and SIGTERM to its parent, which then kills it: a child
    that saw the KeyboardInterrupt itself would report it as its mutant's crash. The parent
    forks with both blocked (`signals_held`), so none reaches the child's inherited handlers
    before this; they are unblocked once ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


class Stopped(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt; `signum` says which."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def interrupts_as_keyboard() -> Iterator[None]:
    """SIGTERM raises `Stopped` (a KeyboardInterrupt) in the main thread while inside."""

    def stop(signum: int, frame: object) -> None:
        raise Stopped(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def signals_held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM until the block is done: a ledger row is whole, and a fork
    is over (CPython ignores an exception raised inside an at-fork callback, so a stop that
    landed there would be lost)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# --- processes a pair starts ----------------------------------------------------------------
# A mutant may start processes that leave its process group and session (`setsid`, a double
# fork). Neither a process group nor a session can find them; the parent chain can: a
# *subreaper* (prctl PR_SET_CHILD_SUBREAPER) adopts every orphan below it instead of PID 1.
# The pair child is one, so the processes its mutant starts stay its descendants and it ends
# them before it answers; the runner is one too, so those of a pair child that died (timeout,
# crash) become the runner's children, which it ends as soon as that pair is finished. Chosen
# over a cgroup because it needs no privilege and no writable cgroup tree (this machine has
# cgroup v1, read-only); the limit: a `kill -9` of the runner ends its pair children
# (PR_SET_PDEATHSIG) but their orphans then go to PID 1 (docs/ledger.md).


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux); False where the kernel offers no such thing."""
    if not sys.platform.startswith("linux"):
        return False
    return libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def children_of(pid: int) -> list[int]:
    """The live children of `pid` (Linux /proc; empty elsewhere)."""
    found: list[int] = []
    try:
        tasks = list(os.scandir(f"/proc/{pid}/task"))
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task.name}/children") as handle:
                found += [int(word) for word in handle.read().split()]
        except OSError:
            continue
    return found


def end_processes(pids: list[int]) -> int:
    """SIGKILL each process and its descendants, and reap those that are our children; the
    number ended."""
    ended = 0
    seen: set[int] = set()
    todo = list(pids)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            os.kill(pid, signal.SIGSTOP)  # stopped first, so it cannot fork while we look
        except ProcessLookupError:
            continue
        todo += children_of(pid)
    for pid in seen:
        try:
            os.kill(pid, signal.SIGKILL)
            ended += 1
        except ProcessLookupError:
            continue
    for pid in seen:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)  # only our own children: others are reaped by their parent
    return ended


def end_descendants(keep: set[int] = frozenset()) -> int:  # type: ignore[assignment]
    """End every child of this process but those in `keep`, with their descendants; repeat
    until none is left (an orphan adopted meanwhile, a child that forked before it stopped)."""
    total = 0
    for _ in range(20):
        strays = [pid for pid in children_of(os.getpid()) if pid not in keep]
        if not strays:
            break
        total += end_processes(strays)
    return total


# --- writes a pair makes --------------------------------------------------------------------
# The pair child enters a private mount namespace (unshare CLONE_NEWNS, root or a kernel
# that allows it) and remounts every mount read-only there but /proc, /sys, /dev and its
# own scratch folder (TMPDIR points there): a mutant's write to the project, /tmp or the
# home folder fails with EROFS inside the mutant, and nothing reaches the disk. Where the
# kernel refuses the namespace, writes are not contained (`confine_writes` says False).

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
UNCONFINED = ("/proc", "/sys", "/dev")


def scratch_folder(pid: int) -> Path:
    """The pair child `pid`'s scratch folder (its parent removes it when the pair ends)."""
    return Path(tempfile.gettempdir()) / f"harness-pair-{pid}"


def sweep_scratch_folders() -> int:
    """Remove the scratch folders of pair children that no longer exist (a runner ended by
    `kill -9` cannot remove its own); the number removed."""
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob("harness-pair-*"):
        pid = folder.name.rpartition("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        points = [line.split()[4] for line in handle]
    # mountinfo escapes space, tab, newline and backslash as octal
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), p) for p in points]


def confine_writes() -> Path | None:
    """Make every file system read-only for this process but its scratch folder; the
    scratch folder, or None when the kernel refuses a private mount namespace."""
    if not sys.platform.startswith("linux"):
        return None
    scratch = scratch_folder(os.getpid())
    scratch.mkdir(mode=0o700, exist_ok=True)
    lib = libc()
    if lib.unshare(CLONE_NEWNS) != 0:
        return None
    if lib.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return None
    where = str(scratch).encode()
    if lib.mount(where, where, None, MS_BIND, None) != 0:
        return None
    for point in _mount_points():
        if point == str(scratch) or any(
            point == top or point.startswith(top + "/") for top in UNCONFINED
        ):
            continue
        lib.mount(b"none", point.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = None  # read TMPDIR again
    return scratch

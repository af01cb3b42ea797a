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

import ctypes
import ctypes.util
import functools
import math
import os
import resource
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
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
    that saw the KeyboardInterrupt itself would report it as its mutant's crash."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


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
    """Defer SIGINT and SIGTERM until the block is done (a ledger row is whole)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

"""`harness run`'s stop latch: a Ctrl-C or SIGTERM that lands while the runner forks a pair is
not lost. CPython ignores an exception raised in an at-fork callback, so the handler's
`Stopped` raised there vanished and the run went on to its end (seen in bench/overhead.py's
stop-and-resume check); the latch raises it again after the next recorded row."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

SCRIPT = """
import os, signal, sys, time
from harness.cli import StopLatch
from harness.execution.isolation import Stopped

latch = StopLatch()
# the window: the signal lands while an at-fork callback of the parent runs
os.register_at_fork(after_in_parent=lambda: [signal.raise_signal(signal.SIGTERM), time.sleep(0.1)])

try:
    with latch.installed():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        for _ in range(10):  # the rows recorded after the fork
            time.sleep(0.05)
            if sys.argv[1] == "latch":
                latch.after_row()
        print("ran to the end", flush=True)
except Stopped as stop:
    print("stopped", stop.signum, flush=True)
"""


@pytest.mark.parametrize(
    ("hook", "said"), [("latch", f"stopped {int(signal.SIGTERM)}"), ("none", "ran to the end")]
)
def test_a_stop_raised_inside_a_fork_callback_is_raised_again_after_the_next_row(hook, said):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, hook], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == said, done.stdout + done.stderr
    # the first raise was swallowed where CPython ignores exceptions: the reason for the latch
    assert "Exception ignored in" in done.stderr


def test_an_ignored_sigint_stays_ignored_and_a_latch_raises_once():
    from harness.cli import StopLatch
    from harness.execution.isolation import Stopped

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        latch = StopLatch()
        with latch.installed():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) == latch._stop
        latch.after_row()  # nothing remembered: nothing raised
        latch.signum = signal.SIGTERM
        with pytest.raises(Stopped):
            latch.after_row()
        latch.after_row()  # once only: a stop already raised again is not raised a third time
    finally:
        signal.signal(signal.SIGINT, before)

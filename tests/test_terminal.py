"""What `harness run` prints fits the terminal (columns left out, never a number split), and
its progress rate is the rate of scoring (issue 15, item 9)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from test_report import FIXTURE

from harness.analysis import main_tables
from harness.analysis.runs import load_run
from harness.execution.progress import PLAIN_EVERY_SECONDS, RunProgress

NUMBER = re.compile(r"\[\d\.\d{3}, \d\.\d{3}\]|\d+\.\d{3}")


def printed(width: int) -> str:
    meta, rows = load_run(FIXTURE)
    console = Console(record=True, width=width, color_system=None)
    for table in main_tables(rows, meta, width=width):
        console.print(table)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 100, 120])
def test_tables_fit_the_width_and_never_split_a_number(width):
    text = printed(width)
    lines = text.splitlines()
    assert max(map(len, lines)) <= width
    wide = printed(400)
    kept = {n for n in NUMBER.findall(text)}
    assert kept, "no number printed at all"
    assert kept <= set(NUMBER.findall(wide))
    # every number a cell holds is printed whole on one line, or its column is left out
    assert "left out to fit" in text
    for line in lines:
        for fragment in re.findall(r"\[\d\.\d{0,3}(?:,\s*\d?\.?\d{0,3})?\s*[│┃]", line):
            pytest.fail(f"an interval is split: {fragment!r} in {line!r}")
    assert not re.search(r"untestabl\s*[│┃]", text), "a header word is split"


def test_a_wide_terminal_leaves_nothing_out():
    text = printed(400)
    assert "left out to fit" not in text
    assert "[0.417, 0.848]" in text and "[0.283, 0.851]" in text


def test_the_rate_is_that_of_scoring_not_of_set_up():
    now = [0.0]
    progress = RunProgress(Console(width=120, file=None, record=True), clock=lambda: now[0])
    progress.start(10, 0)
    now[0] = 10.0  # ten seconds of set-up before the first pair is scored
    for at in (10.0, 10.5, 11.0, 11.5):
        now[0] = at
        progress.advance("detected")
    assert progress.rate() == pytest.approx(2.0)  # 3 intervals in 1.5 s, set-up excluded
    assert progress.remaining() == pytest.approx(3.0)  # 6 pairs left at 2 pairs/s
    progress.stop()


def test_outside_a_terminal_progress_is_a_plain_line_every_interval_and_at_the_end():
    """A CI log or `nohup` gets no bar (rich draws none there): a line when scoring starts,
    one per PLAIN_EVERY_SECONDS of scoring, one when the last pair is recorded."""
    now = [0.0]
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200, color_system=None)
    progress = RunProgress(console, clock=lambda: now[0])
    progress.start(12, 2)
    for i, at in enumerate([5.0, 6.0, 7.0, 35.0, 36.0, 40.0, 65.0, 67.0, 68.0, 69.0]):
        now[0] = at
        progress.advance("detected" if i % 2 else "escaped")
    progress.stop()
    lines = out.getvalue().splitlines()
    assert lines == [
        "scoring 10 of 12 pairs, 2 already in the ledger; the original tools are prepared "
        "first (cached per freeze)",
        # 35 s after the start line: 4 pairs in 30 s of scoring (3 intervals: 0.1 pairs/s)
        "scoring: 6 of 12 pairs, 0.1 pairs/s, ETA 0:01:00, detected=2 escaped=2",
        # 30 s after that one: 6 intervals in 60 s, 3 pairs left
        "scoring: 9 of 12 pairs, 0.1 pairs/s, ETA 0:00:30, detected=3 escaped=4",
        "scoring: 12 of 12 pairs, 0.1 pairs/s, ETA 0:00:00, detected=5 escaped=5",
    ]
    assert PLAIN_EVERY_SECONDS == 30.0


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "plain"])
def test_set_up_steps_are_lines_in_a_terminal_and_out_of_one(terminal):
    """`harness.setup`'s lines reach the user through the progress, before and during the
    bar; a library user's logging never sees them twice (`harness run` stops propagation)."""
    import logging

    from harness.cli import _setup_lines
    from harness.execution.pair_scoring import SETUP_LOG

    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=200, color_system=None)
    progress = RunProgress(console, clock=lambda: 0.0)
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    root = logging.getLogger()
    collect = Collect()
    root.addHandler(collect)
    try:
        with _setup_lines(progress):
            SETUP_LOG.info("freeze %s verified", "abc")
            progress.start(3, 0)
            SETUP_LOG.info("%s", "baselines: the checker on each original tool (1 tool)")
            progress.stop()
        SETUP_LOG.warning("after the run")  # the handler is gone: only the root's sees it
    finally:
        root.removeHandler(collect)
    text = out.getvalue()
    assert "set-up: freeze abc verified" in text
    assert "set-up: baselines: the checker on each original tool (1 tool)" in text
    assert text.index("freeze abc") < text.index("baselines:")
    assert "after the run" not in text
    assert seen == ["after the run"]
    assert SETUP_LOG.propagate and SETUP_LOG.level == logging.NOTSET


def test_a_set_up_line_that_cannot_be_printed_does_not_stop_the_run(capsys):
    from harness.cli import _setup_lines
    from harness.execution.pair_scoring import SETUP_LOG

    class Broken(RunProgress):
        def step(self, text: str) -> None:
            raise BrokenPipeError("stderr closed")

    with _setup_lines(Broken(Console(file=io.StringIO()))):
        SETUP_LOG.info("freeze %s verified", "abc")  # reported by logging, not raised
    assert "BrokenPipeError" in capsys.readouterr().err

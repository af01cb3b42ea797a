"""What `harness run` prints fits the terminal (columns left out, never a number split), and
its progress rate is the rate of scoring (issue 15, item 9)."""

from __future__ import annotations

import re

import pytest
from rich.console import Console
from test_report import FIXTURE

from harness.analysis import main_tables
from harness.analysis.runs import load_run
from harness.execution.progress import RunProgress

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

"""report.html without a browser: self-contained, deterministic, survivors first, every pair
once (the browser tests in test_browser.py check what a reader sees)."""

from __future__ import annotations

import re
from pathlib import Path

from harness.analysis import load_ledger, report
from harness.analysis.html_report import is_survivor, survivors_first

ROOT = Path(__file__).resolve().parent.parent
OPEN = ROOT / "results" / "reference" / "open_world" / "3c14510618c51d9d"
CLOSED = ROOT / "results" / "reference" / "closed_world" / "1150b599761a06f8"


def test_the_page_is_self_contained_and_lists_every_pair_once(tmp_path) -> None:
    first = report(OPEN, tmp_path / "a").html.read_bytes()
    again = report(OPEN, tmp_path / "b").html.read_bytes()
    assert first == again  # the same ledger, the same bytes
    text = first.decode("utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert "<link" not in text and "@import" not in text
    frame = load_ledger(OPEN)
    ids = re.findall(r'<tr class="pair [a-z_ ]+"[^>]*>\s*<td><code>([^<]+)</code>', text)
    assert sorted(ids) == sorted(frame["pair_id"])
    assert f'<b id="count-pairs">{len(frame)}</b>' in text


def test_survivors_come_first_escapes_before_other_misses() -> None:
    for run in (OPEN, CLOSED):
        frame = survivors_first(load_ledger(run))
        survivors = int(is_survivor(frame).sum())
        assert survivors > 0 and is_survivor(frame).iloc[:survivors].all()
        escapes = int(frame["escape"].sum())
        assert frame["escape"].iloc[:escapes].all()
        assert frame["status"].astype(str).iloc[-1] in ("detected", "missed")
    # A control not flagged is right, not a survivor; it sorts after the flagged ones.
    frame = survivors_first(load_ledger(CLOSED))
    controls = frame[frame["arm_kind"] == "controls"]
    assert len(controls) and not is_survivor(controls).any()

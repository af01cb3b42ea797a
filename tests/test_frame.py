"""`load_ledger` / `load_ledgers`: the frame's columns and dtypes as documented, its counts
against the published tables, and docs/ledger.md's worked example run as written."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from harness.analysis import load_ledger, load_ledgers
from harness.analysis.frame import COLUMNS
from harness.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "results" / "reference"
CLOSED = REFERENCE / "closed_world" / "1150b599761a06f8"
OPEN = REFERENCE / "open_world" / "3c14510618c51d9d"
DOC = ROOT / "docs" / "ledger.md"


def test_columns_and_dtypes_are_the_documented_ones() -> None:
    frame = load_ledger(CLOSED)
    assert list(frame.columns) == [name for name, _, _ in COLUMNS]
    assert {name: str(frame[name].dtype) for name in frame} == {n: d for n, d, _ in COLUMNS}
    documented = re.findall(r"^\| `(\w+)` \| (\S+) \|", DOC.read_text(), re.M)
    assert documented[-len(COLUMNS) :] == [(n, d) for n, d, _ in COLUMNS]
    assert list(frame["status"].cat.categories)[:2] == ["detected", "missed"]
    assert frame["status"].cat.ordered
    assert len(frame) == sum(1 for _ in (CLOSED / "ledger.jsonl").open())
    assert frame["freeze_id"].nunique() == 1


def test_counts_match_the_published_per_tool_table() -> None:
    frame = load_ledger(OPEN)
    published = pd.read_csv(OPEN / "tables" / "per_tool.csv")
    ours = (
        frame[frame.in_n]
        .groupby(["arm_kind", "target", "tool"], observed=True)
        .agg(n=("pair_id", "size"), detected=("detected", "sum"), escapes=("escape", "sum"))
        .reset_index()
    )
    merged = published.merge(
        ours, left_on=["arm", "target", "tool"], right_on=["arm_kind", "target", "tool"]
    )
    assert len(merged) == len(published) > 0
    assert (merged.n_x == merged.n_y).all()
    assert (merged.detected_x == merged.detected_y).all()
    assert (merged.escapes_x == merged.escapes_y).all()


def test_the_worked_example_in_docs_runs_and_reproduces_the_recall_table() -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    scope: dict[str, object] = {}
    printed = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(printed):
        exec(compile(block, str(DOC), "exec"), scope)
    recall = scope["recall"]
    assert isinstance(recall, pd.DataFrame)
    published = pd.read_csv(CLOSED / "tables" / "closed_world_recall.csv")
    pooled = published[(published.scope == "pooled") & (published.operator != "all")]
    pooled = pooled.set_index("operator")
    assert sorted(recall.index) == sorted(pooled.index)
    assert (recall.n == pooled.n[recall.index]).all()
    assert (recall.detected == pooled.detected[recall.index]).all()
    assert recall.recall.round(3).tolist() == pooled.recall[recall.index].tolist()
    assert "| operator" in printed.getvalue() and "M-PHANTOM" in printed.getvalue()


def test_load_ledgers_stacks_runs_with_shared_categories() -> None:
    frame = load_ledgers([CLOSED, OPEN])
    assert len(frame) == len(load_ledger(CLOSED)) + len(load_ledger(OPEN))
    assert str(frame["operator"].dtype) == "category"
    assert set(frame["run"]) == {CLOSED.name, OPEN.name}
    assert frame.groupby("run", observed=True).size().to_dict() == {
        CLOSED.name: len(load_ledger(CLOSED)),
        OPEN.name: len(load_ledger(OPEN)),
    }


def test_a_bad_ledger_line_is_a_user_error(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(CLOSED, run)
    with (run / "ledger.jsonl").open("a") as handle:
        handle.write('{"pair_id": 3}\n')
    with pytest.raises(UserError, match="not a ledger row"):
        load_ledger(run)

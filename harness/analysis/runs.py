"""Reading a finished run folder (`results/<plan>/<run>/`): its run.json and ledger rows, and
the drawn corpus its pairs came from."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.errors import Problem, UserError
from harness.execution.draw import Corpus
from harness.execution.ledger import LedgerRow

LEDGER = "ledger.jsonl"
RUN_MANIFEST = "run.json"


class RunMeta(BaseModel):
    """The fields of run.json the analysis needs (the runner writes more)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    plan: str
    run: str
    freeze_id: str
    post_hoc: bool = False
    checker: str | None = None
    ended_at: str | None = None
    pairs_total: int | None = None

    def unfinished(self, in_ledger: int) -> str | None:
        """ "unfinished: N of M pairs" when run.json says the run has not ended (an
        `ended_at` of null, as the runner writes until the last pair is recorded)."""
        if "ended_at" not in self.model_fields_set or self.ended_at is not None:
            return None
        total = "?" if self.pairs_total is None else str(self.pairs_total)
        return f"unfinished: {in_ledger} of {total} pairs"


def load_run_meta(run_dir: Path) -> RunMeta:
    path = run_dir / RUN_MANIFEST
    if not path.is_file():
        raise UserError(
            Problem(
                str(run_dir), "run_dir", "not a run folder (no run.json)", "give results/PLAN/RUN"
            )
        )
    try:
        return RunMeta.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        raise UserError(
            Problem(str(path), "<top>", f"unreadable run manifest ({exc})", "run the plan again")
        ) from exc


@dataclass(frozen=True)
class TornLine:
    """The ledger's last line lacks its newline: a write cut by a kill (`run` repairs it)."""

    path: Path
    line: int

    def describe(self) -> str:
        return (
            f"{self.path}: line {self.line} is torn (a write cut short by a kill) and is "
            "left out; `harness run` on the plan cuts it and scores that pair again"
        )


def load_rows(run_dir: Path) -> list[LedgerRow]:
    """Every complete line of the ledger (a torn last line, from a killed run, is skipped;
    `torn_line` says whether there is one)."""
    path = run_dir / LEDGER
    if not path.is_file():
        raise UserError(
            Problem(str(run_dir), "run_dir", "the run has no ledger.jsonl", "run its plan first")
        )
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith("\n"):
                break
            try:
                rows.append(LedgerRow.model_validate_json(line))
            except ValidationError as exc:
                raise UserError(
                    Problem(
                        str(path),
                        f"line {number}",
                        f"not a ledger row ({exc.errors()[0]['msg']})",
                        "restore the line from the run or run the plan again",
                    )
                ) from exc
    return rows


def torn_line(run_dir: Path) -> TornLine | None:
    path = run_dir / LEDGER
    data = path.read_bytes() if path.is_file() else b""
    if not data or data.endswith(b"\n"):
        return None
    return TornLine(path, data.count(b"\n") + 1)


def load_run(run_dir: Path) -> tuple[RunMeta, list[LedgerRow]]:
    return load_run_meta(run_dir), load_rows(run_dir)


def corpus_path(run_dir: Path, plan: str) -> Path | None:
    """`<root>/mutants/<plan>/manifest.json` for a run at `<root>/results/<plan>/<run>` (or a
    published one at `<root>/results/reference/<plan>/<run>`); None if not laid out so."""
    folder = run_dir.resolve().parent
    if folder.name != plan:
        return None
    results = folder.parent
    if results.name == "reference":
        results = results.parent
    if results.name != "results":
        return None
    return results.parent / "mutants" / plan / "manifest.json"


def load_corpus_for(run_dir: Path, plan: str) -> tuple[Corpus | None, str]:
    """The drawn corpus of the run's plan, or None and why not."""
    path = corpus_path(run_dir, plan)
    if path is None:
        return (
            None,
            f"{run_dir} is not under <root>/results/{plan}/, so its drawn corpus is unknown",
        )
    if not path.is_file():
        return None, f"no drawn corpus at {path}"
    try:
        corpus = Corpus.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        return None, f"unreadable drawn corpus at {path} ({exc.errors()[0]['msg']})"
    if corpus.plan != plan:
        return None, f"the corpus at {path} belongs to plan {corpus.plan}, not {plan}"
    return corpus, ""

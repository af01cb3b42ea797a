"""Reading a finished run folder (`results/<plan>/<run>/`): its run.json and ledger rows, and
the drawn corpus its pairs came from."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from harness.errors import Problem, UserError, field_errors
from harness.execution.draw import Corpus, OperatorPool
from harness.execution.history import FreezeCommit
from harness.execution.ledger import LedgerRow
from harness.execution.plan import Predictions
from harness.execution.publish import RUN_CORPUS
from harness.execution.run_folder import (
    LedgerRead,
    ledger_state,
    pair_ids_digest,
    read_bytes,
    read_ledger,
)

LEDGER = "ledger.jsonl"
RUN_MANIFEST = "run.json"


class RunMeta(BaseModel):
    """The fields of run.json the analysis needs (the runner writes more)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    plan: str
    run: str
    freeze_id: str
    post_hoc: StrictBool = False  # "yes" is no answer: the runner writes true or false
    checker: str | None = None
    # The plan's predictions as the run saw them (runs before they were recorded: None,
    # and `harness report` looks for the frozen plan instead).
    predictions: Predictions | None = None
    predictions_source: str = "recorded in run.json at run time"

    @property
    def comparison_run(self) -> bool:
        """A run of one of the plan's comparison checkers (its folder is
        `<freeze>.<checker>`): the plan's predictions are its own checker's, not this one's."""
        return self.run.startswith(f"{self.freeze_id}.")

    screening_rule: str | None = None
    pools: list[OperatorPool] = []  # empty for runs drawn before screening existed

    ended_at: str | None = None
    pairs_total: StrictInt | None = None  # the runner writes a count; "5" was read as 5
    # where the freeze record was committed when the run started (runs before that was
    # recorded: None)
    freeze_record: FreezeCommit | None = None
    # set by a reader of the ledger, never by run.json: "SHORT: ..." or "ALTERED: ..." when
    # the ledger is not the whole one its run wrote (`incomplete`)
    incomplete: str | None = Field(default=None, exclude=True)
    # not in run.json: the project the run folder lies in (`load_run_meta`), which a
    # `better_than` prediction's run path is relative to
    project_root: str | None = Field(default=None, exclude=True)

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
    fix = "restore run.json from the run (the runner writes every field), or run the plan again"
    try:
        found = json.loads(read_bytes(path) or b"{}")
        if isinstance(found, dict):
            found.pop("incomplete", None)  # only a reader of the ledger says so
            found.pop("project_root", None)  # nor is where the folder lies the file's to say
        meta = RunMeta.model_validate(found)
    except ValidationError as exc:  # one line per field, as every other input's errors
        raise field_errors(path, exc, fix, "unreadable run manifest: ") from None
    except ValueError as exc:  # not JSON, or not UTF-8
        raise UserError(
            Problem(str(path), "<top>", f"unreadable run manifest: not JSON ({exc})", fix)
        ) from None
    root = project_of(run_dir, meta.plan)
    return meta if root is None else meta.model_copy(update={"project_root": str(root)})


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
    """Every whole row of the ledger, through the one validating parser
    (`harness.execution.run_folder.read_ledger`: a bad line or a duplicated pair id is a
    one-line error; a torn last line, from a killed run, is skipped and `torn_line` names it)."""
    return ledger_read(run_dir).rows


def ledger_read(run_dir: Path) -> LedgerRead:
    path = run_dir / LEDGER
    if not path.is_file():
        raise UserError(
            Problem(str(run_dir), "run_dir", "the run has no ledger.jsonl", "run its plan first")
        )
    return read_ledger(path)


def torn_line(run_dir: Path) -> TornLine | None:
    read = ledger_read(run_dir)
    return None if read.torn is None else TornLine(read.path, read.torn)


def incomplete(run_dir: Path, read: LedgerRead) -> str | None:
    """`SHORT: ...` or `ALTERED: ...` when the ledger is not the whole one its run wrote
    (`run_folder.ledger_state`: the drawn corpus, and run.json's pair ids and digest)."""
    manifest = json.loads(read_bytes(run_dir / RUN_MANIFEST) or b"{}")
    plan = manifest.get("plan")
    corpus = load_corpus_for(run_dir, plan)[0] if isinstance(plan, str) else None
    expected = None if corpus is None else {pair.pair_id for pair in corpus.pairs}
    # the plan's current corpus may be a later draw: trusted only as the run's own copy
    # (corpus.json) or when its pair ids are those run.json recorded
    own = (run_dir / RUN_CORPUS).is_file()
    recorded = manifest.get("pair_ids_sha256")
    if expected is not None and not own and pair_ids_digest(expected) != recorded:
        expected = None
    return ledger_state(manifest, read, expected)


def load_run(run_dir: Path) -> tuple[RunMeta, list[LedgerRow]]:
    return load_run_meta(run_dir), load_rows(run_dir)


def project_of(run_dir: Path, plan: str) -> Path | None:
    """`<root>` for a run at `<root>/results/<plan>/<run>` (or a published one at
    `<root>/results/reference/<plan>/<run>`); None if not laid out so."""
    folder = run_dir.resolve().parent
    if folder.name != plan:
        return None
    results = folder.parent
    if results.name == "reference":
        results = results.parent
    if results.name != "results":
        return None
    return results.parent


def corpus_path(run_dir: Path, plan: str) -> Path | None:
    """The run's own `corpus.json` (`harness publish` copies the drawn manifest beside the
    ledger, so a published run keeps its diffs after a later draw), else
    `<root>/mutants/<plan>/manifest.json` of the run's project; None if unknown."""
    if (run_dir / RUN_CORPUS).is_file():
        return run_dir / RUN_CORPUS
    root = project_of(run_dir, plan)
    return None if root is None else root / "mutants" / plan / "manifest.json"


def with_frozen_predictions(run_dir: Path, meta: RunMeta) -> tuple[RunMeta, str]:
    """A run whose run.json records no predictions (runs before they were recorded) gets
    those of `<root>/plans/<plan>.yaml`, but only when that file is the one the run's
    freeze hashed: the committed freeze record has the run's freeze id and the plan's
    SHA-256. Otherwise the run is returned as it is, with why not. A comparison checker's
    run is always returned with why: the plan's predictions are not its checker's."""
    if meta.comparison_run:
        return meta, f"they are the plan checker's; this run is of {meta.checker or meta.run}"
    if meta.predictions is not None:
        return meta, ""
    root = project_of(run_dir, meta.plan)
    if root is None:
        return meta, f"{run_dir} is not under <root>/results/{meta.plan}/, so its plan is unknown"
    plan_path = root / "plans" / f"{meta.plan}.yaml"
    record_path = root / "plans" / f"{meta.plan}.freeze.json"
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        frozen = record["hashes"]["plan"][f"plans/{meta.plan}.yaml"]
        recorded = record["freeze_id"]
    except (OSError, ValueError, KeyError, TypeError):
        return meta, f"no readable freeze record at {record_path}"
    if recorded != meta.freeze_id:
        return meta, f"{record_path} is freeze {recorded}, not the run's {meta.freeze_id}"
    if not plan_path.is_file():
        return meta, f"no plan at {plan_path}"
    if hashlib.sha256(plan_path.read_bytes()).hexdigest() != frozen:
        return meta, f"{plan_path} differs from the plan freeze {recorded} hashed"
    from harness.execution.plan import load_plan

    try:
        predictions = load_plan(plan_path).predictions
    except UserError as exc:
        return meta, f"{plan_path} does not load ({exc.problems[0].line()})"
    source = f"plans/{meta.plan}.yaml, the file freeze {recorded} hashed (run.json has none)"
    return meta.model_copy(update={"predictions": predictions, "predictions_source": source}), ""


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

"""The `harness` command line.

Exit codes: 0 done (for `check`: no tool VIOLATES), 1 `check` found a violation or
`contracts validate` found only draft clauses (valid, but not counted), 2 bad input (one
line per problem, naming file, field and fix), 3 `run --strict` / `report --strict`: a
prediction of the plan failed (without --strict a failed prediction is a result: exit 0).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from harness.errors import USER_ERROR_EXIT, Problem, UserError

if TYPE_CHECKING:
    from harness.analysis.predictions import PredictionRow
    from harness.execution.progress import RunProgress

# Outside a terminal (CI logs, pipes) rich would fold tables to 80 columns.
console = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else 140)
err_console = Console(
    stderr=True, highlight=False, emoji=False, width=None if sys.stderr.isatty() else 140
)

DRAFTS_EXIT = 1
VERDICT_STYLE = {"CONFORMS": "green", "VIOLATES": "bold red", "UNTESTABLE": "yellow"}


def _write_json(destination: str, payload: str) -> None:
    if destination == "-":
        sys.stdout.write(payload + "\n")
        return
    path = Path(destination)
    if not path.parent.is_dir():
        raise UserError(
            Problem(destination, "--json", "its folder does not exist", "create it first")
        )
    if path.is_dir():
        raise UserError(
            Problem(destination, "--json", "is a folder", "name a file to write, or - for stdout")
        )
    from harness.execution.atomic import write_text

    write_text(path, payload + "\n")  # never leave a half-written report behind


def cmd_corpus_record(args: argparse.Namespace) -> int:
    from harness.targets.recorded import record, write_corpus
    from harness.targets.registry import load_target

    out = Path(args.out)
    if not out.is_dir():
        raise UserError(Problem(args.out, "--out", "the folder does not exist", "create it first"))
    for name in args.targets:
        target = load_target(name)
        corpus = record(target.adapter, target.contracts)
        path = write_corpus(out, corpus)
        recorded = {t: n for t, n in corpus.counts.items() if n}
        console.print(
            f"{name}: {len(corpus.tasks)} tasks, {len(corpus.calls)} recorded calls -> {path}"
        )
        console.print("  " + ", ".join(f"{t} {n}" for t, n in recorded.items()), markup=False)
        console.print(
            "  no recorded call: " + (", ".join(corpus.tools_without_calls) or "none"),
            markup=False,
        )
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from harness.checker_registry import resolve_checker
    from harness.targets.registry import load_target

    target = load_target(args.target)
    if args.corpus is not None:
        from harness.targets.recorded import attach_probe_half

        attach_probe_half(target, Path(args.corpus), args.split_seed)
    checker = resolve_checker(args.checker, seed=args.seed)
    report = checker.check(target, args.tool or None)
    if args.json is not None:
        _write_json(args.json, report.model_dump_json(indent=2))
        if args.json == "-":
            return 1 if any(t.verdict == "VIOLATES" for t in report.tools) else 0
    table = Table(
        title=f"{report.target} {report.target_version} — checker "
        f"{report.checker} {report.checker_version}"
    )
    for column in ("tool", "clause", "verdict", "class / reason", "detail"):
        table.add_column(column, overflow="fold")
    for tool in report.tools:
        for clause in tool.clauses:
            why = clause.defect_class or clause.reason or ""
            style = VERDICT_STYLE[clause.verdict]
            table.add_row(
                tool.tool,
                clause.clause_id,
                f"[{style}]{clause.verdict}[/]",
                str(why),
                (clause.detail or "")[:120],
            )
        style = VERDICT_STYLE[tool.verdict]
        label = tool.primary_label()  # one label when several observation clauses break
        table.add_row(
            f"[bold]{tool.tool}[/]",
            "[bold]roll-up[/]",
            f"[{style}]{tool.verdict}[/]",
            f"{tool.probes_run} probes",
            f"primary label: {label}" if label else "",
            end_section=True,
        )
    console.print(table)
    counts = {v: sum(1 for t in report.tools if t.verdict == v) for v in VERDICT_STYLE}
    console.print(f"{len(report.tools)} tools: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    return 1 if counts["VIOLATES"] else 0


def cmd_scan_score(args: argparse.Namespace) -> int:
    from harness.analysis.scanner_score import score_scan

    scores = score_scan(Path(args.score), [args.target] if args.target else None)
    if args.json is not None:
        _write_json(args.json, json.dumps([s.model_dump(mode="json") for s in scores], indent=2))
        if args.json == "-":
            return 0
    table = Table(title=f"static scanner against the confirmed sites of {args.score}")
    for column in (
        "target",
        "sites flagged / sites",
        "agent-visible flagged / sites",
        "flags on sites",
        "flags elsewhere",
    ):
        table.add_column(column, overflow="fold")
    for score in scores:
        table.add_row(
            score.target,
            f"{score.sites_flagged} / {score.sites}",
            f"{score.agent_visible_flagged} / {score.agent_visible_sites}",
            str(score.flags_on_sites),
            str(score.flags_elsewhere),
        )
    console.print(table)
    flagged, total = sum(s.sites_flagged for s in scores), sum(s.sites for s in scores)
    visible = sum(s.agent_visible_flagged for s in scores)
    console.print(
        f"the static half alone flags {flagged} of {total} confirmed sites ({visible} of "
        f"{sum(s.agent_visible_sites for s in scores)} agent-visible); "
        f"{sum(s.flags_elsewhere for s in scores)} flags elsewhere"
    )
    for score in scores:
        for missed in score.missed_site_ids:
            console.print(f"  not flagged: {missed}", markup=False)
        for flag in score.elsewhere:
            console.print(f"  elsewhere: {flag}", markup=False)
    return 0


def cmd_scan(args: argparse.Namespace) -> int:
    from harness.scanner import scan_target
    from harness.targets.registry import load_target

    if args.score:
        return cmd_scan_score(args)
    if not args.target:
        raise UserError(
            Problem("harness scan", "TARGET", "no target given", "name a target, or pass --score")
        )
    target = load_target(args.target)
    flags = scan_target(target, args.tool or None)
    if args.json is not None:
        _write_json(args.json, json.dumps([f.model_dump(mode="json") for f in flags], indent=2))
        if args.json == "-":
            return 0
    table = Table(title=f"static flags — {target.name} (for a person to read; not verdicts)")
    for column in ("file:line", "function", "check", "class hint", "message"):
        table.add_column(column, overflow="fold")
    for flag in flags:
        table.add_row(
            f"{flag.file}:{flag.line}", flag.function, flag.check, flag.class_hint, flag.message
        )
    console.print(table)
    console.print(f"{len(flags)} flags")
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def cmd_validate(args: argparse.Namespace) -> int:
    from harness.contracts.validator import validate_inputs

    warnings: list = []
    count, problems, drafts = validate_inputs(args.paths, warnings)
    for warning in warnings:  # printed, never failing: a non-biconditional signal is legal
        err_console.print(f"warning: {warning.line()}", markup=False, soft_wrap=True)
    for problem in problems:
        err_console.print(problem.line(), markup=False, soft_wrap=True)
    for draft in drafts:
        err_console.print(f"draft: {draft.line()}", markup=False, soft_wrap=True)
    if problems:
        err_console.print(
            f"{_count(len(problems), 'problem')} in {_count(count, 'contract')}", markup=False
        )
        return USER_ERROR_EXIT
    if drafts:  # valid, but a count over these contracts would silently lack the drafts
        err_console.print(
            f"{_count(count, 'contract')} valid; {_count(len(drafts), 'draft clause')} "
            f"{'is' if len(drafts) == 1 else 'are'} not counted",
            markup=False,
        )
        return DRAFTS_EXIT
    console.print(f"{_count(count, 'contract')} valid")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from harness.contracts.model import Contract
    from harness.execution.plan import Plan

    model = Plan if args.command == "plan" else Contract
    payload = json.dumps(model.model_json_schema(), indent=2, sort_keys=True)
    _write_json(args.output, payload)
    return 0


def _plan(args: argparse.Namespace):  # -> (plan path, Plan, project root)
    from harness.execution.plan import load_plan, project_root

    plan_path = Path(args.plan)
    return plan_path, load_plan(plan_path), project_root(plan_path)


def cmd_draw(args: argparse.Namespace) -> int:
    from harness.execution.draw import corpus_dir, draw

    plan_path, plan, root = _plan(args)
    corpus = draw(  # a plan whose predictions refuse leaves the previous draw as it was
        plan,
        root,
        refreeze=args.refreeze,
        check=lambda drawn: _check_predictions(plan_path, plan, root, drawn, False),
        plan_file=str(plan_path),
    )
    by_arm = Counter(pair.arm for pair in corpus.pairs)
    folder = corpus_dir(root, plan)
    screened = sum(sum(p.screened.values()) for p in corpus.pools)
    if screened:
        by_screen = Counter()
        for pool in corpus.pools:
            by_screen.update(pool.screened)
        console.print(
            f"screened out {screened} candidate pairs ("
            + ", ".join(f"{n} {s}" for s, n in sorted(by_screen.items()) if n)
            + f"; rule {corpus.screening_rule}): never drawn, listed in pool.json"
        )
    empty: dict[tuple[str, str], list[str]] = {}
    for pool in corpus.pools:
        if pool.empty_reason is not None:  # said now, not discovered as a missing row later
            empty.setdefault((pool.arm, pool.empty_reason), []).append(pool.operator)
    for (arm, reason), operators in empty.items():
        shown = ", ".join(operators[:6]) + (
            f" and {len(operators) - 6} more" if len(operators) > 6 else ""
        )
        word = "operator" if len(operators) == 1 else f"{len(operators)} operators"
        console.print(f"arm {arm}, {word} {shown}: no candidates: {reason}", markup=False)
    console.print(
        f"drew {len(corpus.pairs)} pairs ("
        + ", ".join(f"{arm}: {n}" for arm, n in sorted(by_arm.items()))
        + f") into {folder}; review {folder / 'README.md'}, then `harness freeze {plan_path}`"
    )
    return 0


def cmd_freeze(args: argparse.Namespace) -> int:
    from harness.execution.draw import load_corpus
    from harness.execution.freeze import commit_commands, freeze

    plan_path, plan, root = _plan(args)
    corpus = load_corpus(root, plan)
    used = [p.pair_id for p in corpus.pairs]

    def check(drawn) -> None:  # once the draw is found as drawn
        _check_predictions(plan_path, plan, root, drawn, False)

    record = freeze(plan_path, plan, root, used, corpus=corpus, check=check)
    console.print(
        f"froze plan {plan.name}: freeze {record.freeze_id} "
        f"({sum(len(v) for v in record.hashes.values())} files hashed); nothing committed. "
        f"Commit the record before any run (in {root}):",
        markup=False,
    )
    for command in commit_commands(root, plan_path, record):
        console.print(f"    {command}", markup=False, soft_wrap=True)
    return 0


def _check_predictions(plan_path: Path, plan, root: Path, corpus, show: bool, **kw) -> None:
    """`harness plan check`'s table (when `show`) and its warnings, or its errors under
    `predictions.undecidable: error` (harness.analysis.decidability)."""
    from harness.analysis.decidability import (
        check_plan,
        decidability_table,
        last_published,
        published_figures,
        undecidable_problems,
    )
    from harness.analysis.render import to_rich
    from harness.execution.freeze import read_record

    run = last_published(root, plan.name)
    published = published_figures(run) if run else None
    rows = check_plan(plan, corpus, published, **kw)
    if show:
        record = read_record(root, plan)
        freeze = record.freeze_id if record else "not frozen"
        table = decidability_table(rows, plan.name, freeze, published and published.run)
        console.print(to_rich(table, console.width))
    problems = undecidable_problems(str(plan_path), rows)
    if problems and plan.predictions.undecidable == "error":
        raise UserError(problems)
    for problem in problems:
        err_console.print(f"warning: {problem.line()}", markup=False, soft_wrap=True)


def cmd_plan_check(args: argparse.Namespace) -> int:
    from harness.execution.draw import checkers_known, load_corpus

    for option, value in (("--icc", args.icc), ("--assume", args.assume)):
        if value is not None and not 0.0 <= value <= 1.0:  # also refuses nan
            raise UserError(Problem(option, option[2:], f"{value} is no proportion", "give 0 to 1"))
    plan_path, plan, root = _plan(args)
    checkers_known(plan, str(plan_path))
    corpus = load_corpus(root, plan)
    _check_predictions(plan_path, plan, root, corpus, True, icc=args.icc, assume=args.assume)
    return 0


def _same_run(args: argparse.Namespace) -> list[str]:
    """The `harness run` command that resumes the run `args` started (same ledger)."""
    words = ["harness", "run", args.plan]
    if args.post_hoc:
        words.append("--post-hoc")
    if args.checker:
        words += ["--checker", args.checker]
    if args.executor != "local":
        words += ["--executor", args.executor]
    if args.scheduler:
        words += ["--scheduler", args.scheduler]
    if args.strict:
        words.append("--strict")
    if args.no_skip_by_coverage:
        words.append("--no-skip-by-coverage")
    return words


class StopLatch:
    """Ctrl-C and SIGTERM for `harness run`, never lost.

    Each raises at once in the main thread (SIGTERM as `isolation.Stopped`), as
    `isolation.interrupts_as_keyboard` does; the latch also remembers it. CPython ignores an
    exception raised in an at-fork callback ("Exception ignored in: _releaseLock", logging's
    lock after `os.fork`), so a signal that lands while the runner forks a pair's child was
    swallowed and the run went on to its end. `after_row`, called by the progress hook once
    a row is recorded, raises a remembered signal again, once: the run stops at the latest
    after the next row. A SIGINT that was ignored when the run started (a background job of
    a non-interactive shell) stays ignored."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.raised_again = False

    def _stop(self, signum: int, frame: object) -> None:
        from harness.execution.isolation import Stopped

        self.signum = signum
        raise Stopped(signum)

    def after_row(self) -> None:
        if self.signum is not None and not self.raised_again:
            from harness.execution.isolation import Stopped

            self.raised_again = True
            raise Stopped(self.signum)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        stops = [signal.SIGTERM]
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            stops.append(signal.SIGINT)
        previous = {s: signal.signal(s, self._stop) for s in stops}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


class _StepHandler(logging.Handler):
    """`harness.setup`'s lines (the run's set-up steps) as lines of the run's progress."""

    def __init__(self, progress: RunProgress):
        super().__init__(logging.INFO)
        self.progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.progress.step(record.getMessage())
        except Exception:  # a line that cannot be printed must not stop the run
            self.handleError(record)


@contextlib.contextmanager
def _setup_lines(progress: RunProgress) -> Iterator[None]:
    from harness.execution.pair_scoring import SETUP_LOG

    handler = _StepHandler(progress)
    level, propagate = SETUP_LOG.level, SETUP_LOG.propagate
    SETUP_LOG.addHandler(handler)
    SETUP_LOG.setLevel(logging.INFO)
    SETUP_LOG.propagate = False  # said once, here, whatever else a caller's logging does
    try:
        yield
    finally:
        SETUP_LOG.removeHandler(handler)
        SETUP_LOG.setLevel(level)
        SETUP_LOG.propagate = propagate


def cmd_run(args: argparse.Namespace) -> int:
    from harness.analysis import load_run_meta, main_tables
    from harness.analysis.predictions import score_predictions
    from harness.analysis.report import REPORT_HTML
    from harness.analysis.verdict import report_pointer
    from harness.execution.executors import executor_for
    from harness.execution.progress import RunProgress
    from harness.execution.runner import RunInterrupted, execute

    executor = executor_for(
        args.executor, workers=args.workers, scheduler=args.scheduler, batch_size=args.batch_size
    )
    if args.post_hoc:  # the predictions' decidability, as draw and freeze check it
        from harness.execution.draw import load_corpus
        from harness.execution.plan import no_file_in_the_way, project_root

        no_file_in_the_way(project_root(Path(args.plan)), "results")  # as a run says it first
        plan_path, plan, root = _plan(args)
        _check_predictions(plan_path, plan, root, load_corpus(root, plan), False)
    latch = StopLatch()
    progress = RunProgress(err_console, after_row=latch.after_row)
    try:
        with latch.installed(), _setup_lines(progress):  # SIGTERM stops it as Ctrl-C does
            result = execute(
                Path(args.plan),
                post_hoc=args.post_hoc,
                progress=progress,
                executor=executor,
                checker=args.checker,
                strict=args.strict,
                skip_by_coverage=not args.no_skip_by_coverage,
            )
    except RunInterrupted as stop:
        progress.stop()
        kept = (
            f"{stop.in_ledger} of {stop.total} pairs are in the ledger {stop.folder}"
            if stop.in_ledger
            else f"0 of {stop.total} pairs were scored, nothing kept"
        )
        again = " ".join(_same_run(args))
        err_console.print(
            f"interrupted: {kept}; resume with `{again}`", markup=False, soft_wrap=True
        )
        return 128 + stop.signum
    except KeyboardInterrupt as stop:  # before the run folder existed: set-up, freeze check
        progress.stop()
        err_console.print("interrupted during set-up: nothing was scored", markup=False)
        return 128 + getattr(stop, "signum", 2)
    finally:
        progress.stop()
    for warning in result.warnings:
        err_console.print(f"warning: {warning}", markup=False, soft_wrap=True)
    label = " (POST HOC)" if any(r.post_hoc for r in result.rows) else ""
    console.print(
        f"{result.run_dir}: {result.scored} pairs scored now, "
        f"{result.skipped} already in the ledger{label}"
    )
    meta = load_run_meta(result.run_dir)
    for table in main_tables(result.rows, meta, width=console.width):
        console.print(table)
    scored = (
        []
        if meta.comparison_run
        else score_predictions(result.rows, meta.predictions, meta.project_root)
    )
    page = result.run_dir / REPORT_HTML
    return _predictions_exit(scored, args.strict, report_pointer(result.run_dir, page))


def _predictions_exit(predictions: Sequence[PredictionRow], strict: bool, report: str) -> int:
    """The verdict in three lines (`harness.analysis.verdict`); exit 3 under --strict when a
    prediction failed."""
    from harness.analysis.predictions import PREDICTION_FAILED_EXIT, failed
    from harness.analysis.verdict import verdict_lines

    for line in verdict_lines(predictions, report):
        console.print(line, markup=False, soft_wrap=True)
    return PREDICTION_FAILED_EXIT if strict and failed(predictions) else 0


def cmd_baseline(args: argparse.Namespace) -> int:
    from harness.checker import ReferenceChecker
    from harness.execution.baseline import baseline
    from harness.targets.registry import resolve_adapter

    out = Path(args.out)
    _refuse_foreign_folder(out)
    for name in args.targets:  # before anything is written beside --out
        resolve_adapter(name)
    rows = baseline(args.targets, out, ReferenceChecker(seed=args.seed))
    counts = Counter(row["verdict"] for row in rows)
    eligible = sum(1 for row in rows if row["headline_eligible"])
    console.print(
        f"{len(rows)} tools: "
        + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        + f"; {eligible} with a headline-eligible finding (an agent-visible clause violated)"
        + f"; wrote {args.out}/SUMMARY.md, tools.jsonl and reports/"
    )
    return 0


BASELINE_FILES = frozenset({"SUMMARY.md", "tools.jsonl", "reports"})


def _refuse_foreign_folder(out: Path) -> None:
    """`harness baseline` replaces its --out folder whole: refuse a file, and a folder
    holding anything but an earlier baseline's files (a typo must not delete a project's
    plans/ or results/)."""
    if out.exists() and not out.is_dir():
        raise UserError(Problem(str(out), "--out", "is a file", "name a folder to write"))
    if out.is_dir():
        foreign = sorted(p.name for p in out.iterdir() if p.name not in BASELINE_FILES)
        if foreign:
            raise UserError(
                Problem(
                    str(out),
                    "--out",
                    f"holds {', '.join(foreign[:3])}{' …' if len(foreign) > 3 else ''}, "
                    "which is no baseline's, and would be replaced whole",
                    "name a new folder, or one an earlier `harness baseline` wrote",
                )
            )


def cmd_trace(args: argparse.Namespace) -> int:
    from harness.checker import ReferenceChecker
    from harness.trace import trace

    def progress(message: str) -> None:
        err_console.print(f"trace: {message}", markup=False, soft_wrap=True)

    result = trace(
        args.targets,
        Path(args.source),
        Path(args.out),
        Path(args.repairs),
        ReferenceChecker(seed=args.seed),
        progress,
        controls=not args.no_controls,
    )
    exposed = sum(1 for row in result.rows if row.basis.exposed)
    console.print(
        f"{len({(r.target, r.tool, r.mutant_id) for r in result.rows})} defects x tasks: "
        f"{len(result.rows)} "
        f"rows ({exposed} exposed), {len(result.repairs)} repairs validated, "
        f"{len(result.controls)} positive-control paths; wrote {args.out}/trace.jsonl, "
        "tables/ and macros.tex"
    )
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from harness.analysis import report

    result = report(
        Path(args.run_dir),
        Path(args.out) if args.out else None,
        strict=args.strict,
        coverage=[Path(p) for p in args.coverage],
    )
    for note in result.notes:
        console.print(f"note: {note}")
    console.print(
        f"wrote {len(result.tables)} table files, "
        + (f"{result.figure.name}, " if result.figure else "")
        + f"{result.macros.name}, {result.mutation_report.name} and {result.html.name} "
        + f"under {result.out_dir}"
    )
    return _predictions_exit(result.predictions, args.strict, str(result.html))


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.analysis import compare, comparison_table
    from harness.analysis.render import render_csv, render_latex, render_markdown, to_rich

    table = comparison_table(compare(Path(args.run_a), Path(args.run_b), args.by))
    if args.format == "rich":
        # 18 columns: outside a terminal, 140 would fold every name (use --format md there)
        wide = console if sys.stdout.isatty() else Console(highlight=False, emoji=False, width=240)
        wide.print(to_rich(table, width=wide.width))
    else:
        render = {"md": render_markdown, "csv": render_csv, "tex": render_latex}[args.format]
        sys.stdout.write(render(table))
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from harness.execution.publish import publish

    destination = publish(Path(args.run_dir))
    console.print(f"published {args.run_dir} to {destination}")
    return 0


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _size(count: int) -> str:
    """Bytes in decimal units, as `du --si` prints them."""
    if count < 1000:
        return f"{count} B"
    value = float(count)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            break
    return f"{value:,.1f} {unit}"


def current_freezes(root: Path) -> dict[str, str]:
    """freeze id -> the record naming it, for every `plans/*.freeze.json` under `root`; a
    record that does not parse is one line naming it (exit 2): pruning must not guess."""
    found: dict[str, str] = {}
    for record in sorted((root / "plans").glob("*.freeze.json")):
        rel = record.relative_to(root).as_posix()
        try:
            freeze_id = json.loads(record.read_text(encoding="utf-8"))["freeze_id"]
        except (OSError, ValueError, KeyError, TypeError):
            raise UserError(
                Problem(
                    rel,
                    "freeze_id",
                    "no freeze id can be read from this record",
                    "restore it from git (`git checkout -- " + rel + "`), or pass --all",
                )
            ) from None
        found[str(freeze_id)] = rel
    return found


def cmd_cache_prune(args: argparse.Namespace) -> int:
    """Remove the set-up cache of every freeze no plan of the project is frozen at."""
    from harness.execution.setup_cache import FOLDER

    root = Path(args.root)
    if not (root / "plans").is_dir() and not args.all:
        raise UserError(
            Problem(
                str(root),
                "--root",
                "no plans/ folder here, so no freeze to keep",
                "pass the project folder (the one holding plans/ and results/), or --all",
            )
        )
    cache = root / "results" / FOLDER
    folders = sorted(p for p in cache.iterdir() if p.is_dir()) if cache.is_dir() else []
    keep = {} if args.all else current_freezes(root)
    verb = "would remove" if args.dry_run else "removed"
    freed = kept = 0
    for folder in folders:
        size = _folder_bytes(folder)
        if folder.name in keep:
            kept += size
            console.print(f"kept    {folder.name} ({_size(size)}): {keep[folder.name]}")
            continue
        if not args.dry_run:
            shutil.rmtree(folder)
        freed += size
        console.print(f"{verb} {folder.name} ({_size(size)})")
    console.print(
        f"{cache}: {verb} {_size(freed)}, kept {_size(kept)} "
        f"({len(keep)} current freeze{'s' if len(keep) != 1 else ''})"
    )
    return 0


def list_rows(kind: str) -> list[dict[str, str]]:
    """What `harness list KIND` prints: operators with their arm, defect class and family;
    targets and checkers by name with the class each name resolves to and the distribution
    that registers it (none is loaded)."""
    if kind == "operators":
        from harness.mutation.registry import all_operators

        return [
            {
                "name": name,
                "arm": op.arm.value,
                "defect_class": op.defect_class.value if op.defect_class else "-",
                "family": type(op).__module__,
            }
            for name, op in all_operators().items()
        ]
    from harness.plugins import CHECKERS_GROUP, TARGETS_GROUP, registrations

    group = TARGETS_GROUP if kind == "targets" else CHECKERS_GROUP
    return [
        {"name": name, "class": ref, "distribution": dist}
        for name, (dist, ref) in registrations(group).items()
    ]


def cmd_list(args: argparse.Namespace) -> int:
    rows = list_rows(args.kind)
    if args.json:
        _write_json(args.json, json.dumps(rows, indent=2))
        return 0
    table = Table(title=f"{len(rows)} {args.kind}", show_lines=False)
    for column in rows[0] if rows else ["name"]:
        table.add_column(column.replace("_", " "), overflow="fold")
    for row in rows:
        table.add_row(*row.values())
    console.print(table)
    return 0


def cmd_new_adapter(args: argparse.Namespace) -> int:
    from harness.scaffold import class_name, new_adapter

    written = new_adapter(args.name, Path(args.dir))
    console.print(
        f"wrote {len(written)} files under {Path(args.dir) / args.name}; next: "
        f"`harness check {args.name}.adapter:{class_name(args.name)}` with its folder "
        "importable (see its README.md)",
        markup=False,
    )
    return 0


def cmd_new_contract(args: argparse.Namespace) -> int:
    from harness.scaffold import draft_contract, render_contract, write_new
    from harness.targets.registry import resolve_adapter

    adapter = resolve_adapter(args.target)
    text = render_contract(draft_contract(adapter, args.tool))
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    path = Path(args.out) if args.out else adapter.contracts_dir() / f"{args.tool}.yaml"
    write_new(path, text, "--out")
    console.print(
        f"wrote {path}: every clause is a draft; write the predicates, drop the _draft "
        f"suffixes, then `harness contracts validate {path}`",
        markup=False,
    )
    return 0


STRICT_HELP = (
    "exit 3 when a prediction of the plan failed (without it a failed prediction is "
    "reported and the exit code is 0)"
)
REPORT_STRICT_HELP = (
    "refuse a run that has not ended or whose ledger has a torn last line (exit 2); and "
    + STRICT_HELP
)
RUN_STRICT_HELP = (
    "refuse to run when the freeze record is not committed as it is, or a package version "
    "differs from the freeze; and " + STRICT_HELP
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Mutation-testing validation harness for tool-contract checkers.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="run a checker (default: reference) on a target's tools")
    check.add_argument("target", help="target name (toy_domain) or package.module:Adapter")
    check.add_argument("--tool", action="append", help="check only this tool (repeatable)")
    check.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="FILE",
        help="write the full report with witnesses (stdout when no FILE)",
    )
    check.add_argument("--seed", type=int, default=0, help="probe seed (default 0)")
    check.add_argument(
        "--checker",
        default="reference",
        help="a registered checker (reference, static-scanner) or package.module:Class",
    )
    check.add_argument(
        "--corpus",
        metavar="DIR",
        help="probe also from the recorded pre-states of the probe half of DIR/<target>.json",
    )
    check.add_argument(
        "--split-seed", type=int, default=0, help="the corpus split's seed (default 0)"
    )
    check.set_defaults(func=cmd_check)

    corpus_cmd = sub.add_parser("corpus", help="recorded-call corpora of the reference solutions")
    corpus_sub = corpus_cmd.add_subparsers(dest="corpus_command", required=True)
    corpus_record = corpus_sub.add_parser(
        "record", help="replay every task's reference calls; one JSON file per target"
    )
    corpus_record.add_argument("targets", nargs="+", metavar="TARGET")
    corpus_record.add_argument("--out", default="corpora", help="folder (default: corpora)")
    corpus_record.set_defaults(func=cmd_corpus_record)

    scan = sub.add_parser("scan", help="static flags for a target's tools")
    scan.add_argument("target", nargs="?", help="a target (with --score: only this target)")
    scan.add_argument(
        "--score",
        metavar="SITES",
        help="score the scan against a ledger of confirmed defect sites (sites/agentdojo.yaml): "
        "per target, sites flagged / sites and flags elsewhere",
    )
    scan.add_argument("--tool", action="append", help="scan only this tool (repeatable)")
    scan.add_argument("--json", nargs="?", const="-", metavar="FILE")
    scan.set_defaults(func=cmd_scan)

    draw = sub.add_parser("draw", help="draw a plan's mutants into mutants/<plan>/ for review")
    draw.add_argument("plan", help="plans/NAME.yaml")
    draw.add_argument(
        "--refreeze",
        action="store_true",
        help="draw anew for a frozen plan: sampled arms from pairs no earlier freeze used, "
        "census arms (draw: all) every candidate again",
    )
    draw.set_defaults(func=cmd_draw)

    freeze_cmd = sub.add_parser(
        "freeze", help="hash every input of a drawn plan into its record; print the git commands"
    )
    freeze_cmd.add_argument("plan", help="plans/NAME.yaml, drawn")
    freeze_cmd.set_defaults(func=cmd_freeze)

    run = sub.add_parser("run", help="verify the freeze, score every pair, print the summary")
    run.add_argument(
        "plan", help="plans/NAME.yaml, drawn and frozen (run again to resume its ledger)"
    )
    run.add_argument(
        "--workers",
        type=int,
        default=None,
        help="parallel pairs, or the LocalCluster's workers with --executor dask (default: CPUs)",
    )
    run.add_argument(
        "--executor",
        default="local",
        help="local (forked processes, the default) or dask (docs/cluster.md)",
    )
    run.add_argument(
        "--scheduler",
        default=None,
        help="tcp://HOST:8786 of a running Dask scheduler (default: start a LocalCluster)",
    )
    run.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="pairs per Dask task (--executor dask only; default: guided, each task "
        "ceil(pairs left / (2 x worker threads)) pairs, at most 8, down to 1 at the end)",
    )
    run.add_argument(
        "--post-hoc",
        action="store_true",
        help="run although inputs changed since the freeze; every row is post hoc",
    )
    run.add_argument(
        "--checker",
        default=None,
        help="run a checker of the plan's comparison_checkers instead of its checker, into "
        "results/PLAN/<freeze>.<checker>/ (any other checker only with --post-hoc)",
    )
    run.add_argument("--strict", action="store_true", help=RUN_STRICT_HELP)
    run.add_argument(
        "--no-skip-by-coverage",
        action="store_true",
        help="run every liveness call, grader replay and checker run of every pair, even "
        "those the mutant cannot reach (the same rows, slower; for checking that claim)",
    )
    run.set_defaults(func=cmd_run)

    publish_cmd = sub.add_parser("publish", help="copy a finished run into results/reference/")
    publish_cmd.add_argument("run_dir")
    publish_cmd.set_defaults(func=cmd_publish)

    cache_cmd = sub.add_parser("cache", help="the set-up cache under results/.setup-cache/")
    cache_sub = cache_cmd.add_subparsers(dest="cache_command", required=True)
    prune = cache_sub.add_parser(
        "prune",
        help="remove the set-up cache of every freeze that no plans/*.freeze.json names",
        description="Each freeze's set-up (baselines, liveness observations, grader "
        "verdicts, coverage) is cached under results/.setup-cache/<freeze id>/ and never "
        "removed by a run; a refreeze leaves the old one behind (hundreds of MB for plans "
        "with tau2-bench). This removes every freeze's cache but those of the project's "
        "current freeze records. A removed cache is only recomputed if that freeze is run "
        "again.",
    )
    prune.add_argument("--root", default=".", help="the project folder (default: .)")
    prune.add_argument("--all", action="store_true", help="remove the current freezes' too")
    prune.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    prune.set_defaults(func=cmd_cache_prune)

    plan_cmd = sub.add_parser("plan", help="the plan JSON Schema; check a plan's predictions")
    psub = plan_cmd.add_subparsers(dest="plan_command", required=True)
    plan_check = psub.add_parser(
        "check", help="can each prediction be decided at the drawn n? (also run by draw, freeze)"
    )
    plan_check.add_argument("plan", help="plans/NAME.yaml, drawn")
    plan_check.add_argument(
        "--icc", type=float, default=None, help="a stated ICC instead of the published deff"
    )
    plan_check.add_argument(
        "--assume", type=float, default=None, help="the true rate P(held) is computed at"
    )
    plan_check.set_defaults(func=cmd_plan_check)
    plan_schema = psub.add_parser("schema", help="print the plan JSON Schema")
    plan_schema.add_argument("--output", default="-", help="file to write (default stdout)")
    plan_schema.set_defaults(func=cmd_schema)

    base = sub.add_parser(
        "baseline",
        help="the checker's verdicts on original tools, written "
        "as a result (one row per tool and a summary)",
    )
    base.add_argument("targets", nargs="+", help="target names")
    base.add_argument(
        "--out",
        required=True,
        help="folder to write, e.g. results/agentdojo-baseline (replaced whole: a folder "
        "holding anything but an earlier baseline's files is refused)",
    )
    base.add_argument("--seed", type=int, default=0)
    base.set_defaults(func=cmd_baseline)

    trace_cmd = sub.add_parser(
        "trace",
        help="score at risk: the tasks each baseline VIOLATES can corrupt, gold reach, "
        "repairs and positive controls",
    )
    trace_cmd.add_argument("targets", nargs="+", help="target names")
    trace_cmd.add_argument(
        "--from", dest="source", required=True, help="a baseline folder (harness baseline)"
    )
    trace_cmd.add_argument(
        "--out", required=True, help="folder to write, e.g. results/score-at-risk"
    )
    trace_cmd.add_argument("--repairs", default="repairs", help="repairs folder (default: repairs)")
    trace_cmd.add_argument(
        "--seed", type=int, default=0, help="checker seed for validating repairs"
    )
    trace_cmd.add_argument(
        "--no-controls", action="store_true", help="skip the positive controls (static trace)"
    )
    trace_cmd.set_defaults(func=cmd_trace)

    report_cmd = sub.add_parser("report", help="re-derive every table of a run from its ledger")
    report_cmd.add_argument("run_dir")
    report_cmd.add_argument("--out", help="folder for tables/, plot, macros (default: RUN_DIR)")
    report_cmd.add_argument("--strict", action="store_true", help=REPORT_STRICT_HELP)
    report_cmd.add_argument(
        "--coverage",
        nargs="+",
        default=[],
        metavar="FILE",
        help="contract-coverage JSON (`harness contracts coverage`): a section of report.html",
    )
    report_cmd.set_defaults(func=cmd_report)

    compare_cmd = sub.add_parser(
        "compare",
        help="two runs per operator: a support claim (evidence bounds) and a "
        "sampling-robust claim (Wilson-widened), each only where its ranges separate",
    )
    compare_cmd.add_argument("run_a")
    compare_cmd.add_argument("run_b")
    compare_cmd.add_argument(
        "--format",
        choices=("rich", "md", "csv", "tex"),
        default="rich",
        help="a terminal table (default), or the table as Markdown, CSV or LaTeX on stdout",
    )
    compare_cmd.add_argument(
        "--by",
        choices=("arm", "scope"),
        default="arm",
        help="rows per arm and operator (default), or per arm kind, scope (toy, real, pooled) "
        "and operator, as the recall tables split them: a sampled plan beside its exhaustive "
        "variant",
    )
    compare_cmd.set_defaults(func=cmd_compare)

    list_cmd = sub.add_parser("list", help="the registered operators, targets or checkers, by name")
    list_cmd.add_argument("kind", choices=["operators", "targets", "checkers"])
    list_cmd.add_argument(
        "--json", nargs="?", const="-", default=None, metavar="FILE", help="as JSON"
    )
    list_cmd.set_defaults(func=cmd_list)

    new_adapter = sub.add_parser(
        "new-adapter", help="write a benchmark package skeleton wired to the Adapter protocol"
    )
    new_adapter.add_argument("name", help="the package name, e.g. my_bench")
    new_adapter.add_argument("--dir", default=".", help="folder to create it in (default .)")
    new_adapter.set_defaults(func=cmd_new_adapter)

    new_contract = sub.add_parser(
        "new-contract", help="draft a contract from a tool's signature and docstring"
    )
    new_contract.add_argument("tool")
    new_contract.add_argument(
        "--target", required=True, help="target name or package.module:Adapter"
    )
    new_contract.add_argument(
        "--out", help="file to write (default: the target's contracts folder; - for stdout)"
    )
    new_contract.set_defaults(func=cmd_new_contract)

    contracts = sub.add_parser(
        "contracts", help="validate contracts, export their JSON Schema, measure their quality"
    )
    csub = contracts.add_subparsers(dest="contracts_command", required=True)
    validate = csub.add_parser("validate", help="check contracts against the installed target")
    validate.add_argument("paths", nargs="+", help="target names, contract files or folders")
    validate.set_defaults(func=cmd_validate)
    schema = csub.add_parser("schema", help="print the contract JSON Schema (for editors)")
    schema.add_argument("--output", default="-", help="file to write (default stdout)")
    schema.set_defaults(func=cmd_schema)
    _add_quality_parsers(csub)
    return parser


def _quality(name: str):  # -> the command `name` of harness.analysis.quality.commands
    def run(args: argparse.Namespace) -> int:
        from harness.analysis.quality import commands

        return int(getattr(commands, name)(args))

    return run


def _add_quality_parsers(csub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """`contracts coverage | corpus | agree` (docs/contract-quality.md); the commands load
    on call: importing harness.analysis costs every other command 0.6 s."""
    coverage = csub.add_parser(
        "coverage", help="surface and state coverage of the contracts, per tool and target"
    )
    coverage.add_argument("targets", nargs="+", help="target names")
    coverage.add_argument("--out", default="results/contract-coverage", help="folder to write")
    coverage.add_argument("--name", help="file stem (default: the targets joined by -)")
    coverage.add_argument(
        "--corpus",
        help="a probe corpus file, or a recorded-call corpus file (corpora/<target>.json), "
        "whose calls are run too",
    )
    coverage.add_argument(
        "--runs",
        nargs="*",
        default=None,
        help="run folders whose no_clause misses are shown (default: the "
        "latest published exhaustive runs; none: give --runs alone)",
    )
    coverage.add_argument("--seed", type=int, default=0)
    coverage.add_argument(
        "--min",
        type=float,
        default=None,
        help="exit 1 when a target's surface or state share is below this",
    )
    coverage.set_defaults(func=_quality("cmd_coverage"))

    corpus = csub.add_parser("corpus", help="build the probe corpus file two contract sets share")
    corpus.add_argument("a", help="contract set A: a folder of contracts, or `shipped`")
    corpus.add_argument("b", help="contract set B")
    corpus.add_argument("--targets", nargs="+", required=True, help="target names")
    corpus.add_argument("--out", required=True, help="corpus file to write (JSON)")
    corpus.add_argument("--seed", type=int, default=0)
    corpus.add_argument(
        "--recorded",
        nargs="+",
        default=[],
        metavar="FILE",
        help="recorded-call corpus files (corpora/<target>.json) whose calls join the corpus",
    )
    corpus.set_defaults(func=_quality("cmd_corpus"))

    agree = csub.add_parser("agree", help="agreement of two contract sets on one probe corpus")
    agree.add_argument("a", help="contract set A: a folder of contracts, or `shipped`")
    agree.add_argument("b", help="contract set B")
    agree.add_argument("--corpus", required=True, help="the corpus file (`contracts corpus`)")
    agree.add_argument(
        "--strata", required=True, help="YAML: `target/tool: blind` or `target/tool: contaminated`"
    )
    agree.add_argument(
        "--targets",
        nargs="*",
        help="only these targets, by name or package.module:Adapter (default: the corpus's)",
    )
    agree.add_argument("--out", default="results/agreement", help="folder to write")
    agree.set_defaults(func=_quality("cmd_agree"))


HASH_SEED = "0"


def fixed_hash_seed() -> None:
    """Run this program again under PYTHONHASHSEED=0 when the hash seed is random (unset, or
    `random`): a set of strings iterates in the seed's order, and a ledger row may quote one
    (pydantic's message for a refused AgentDojo calendar event lists its participants as
    `list(set(...))` left them), so rows scored under two random seeds could differ in text.
    A seed the user fixed is kept. Call it only where this process is the program itself."""
    if os.environ.get("PYTHONHASHSEED", "random") != "random":
        return
    os.environ["PYTHONHASHSEED"] = HASH_SEED
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


def entry() -> int:
    """The `harness` command (and `python -m harness`): `main` under a fixed hash seed."""
    fixed_hash_seed()
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    from harness.execution.atomic import is_write_error, write_problem
    from harness.execution.isolation import interrupts_as_keyboard

    args = build_parser().parse_args(argv)
    try:
        with interrupts_as_keyboard():  # SIGTERM stops any command like Ctrl-C
            return int(args.func(args))
    except UserError as exc:
        for problem in exc.problems:
            err_console.print(f"error: {problem.line()}", markup=False, soft_wrap=True)
        return USER_ERROR_EXIT
    except KeyboardInterrupt as stop:  # every writer writes aside: nothing half-done is left
        signum = getattr(stop, "signum", signal.SIGINT)
        err_console.print(
            f"interrupted ({signal.Signals(signum).name}): harness {args.command} stopped; "
            "what it was writing was discarded, earlier files are as they were",
            markup=False,
            soft_wrap=True,
        )
        return 128 + signum
    except OSError as exc:  # a write no `all_or_nothing` caught (a full disk, a size limit)
        if not is_write_error(exc):
            raise
        line = write_problem(exc.filename or "?", exc).problems[0].line()
        err_console.print(f"error: {line}", markup=False, soft_wrap=True)
        return USER_ERROR_EXIT


if __name__ == "__main__":
    sys.exit(entry())

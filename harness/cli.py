"""The `harness` command line.

Exit codes: 0 done (for `check`: no tool VIOLATES), 1 `check` found a violation or
`contracts validate` found only draft clauses (valid, but not counted), 2 bad input (one
line per problem, naming file, field and fix).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from harness.errors import USER_ERROR_EXIT, Problem, UserError

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
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(payload + "\n", encoding="utf-8")
    tmp.replace(path)  # never leave a half-written report behind


def cmd_check(args: argparse.Namespace) -> int:
    from harness.checkers import resolve_checker
    from harness.targets.registry import load_target

    target = load_target(args.target)
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
        table.add_row(
            f"[bold]{tool.tool}[/]",
            "[bold]roll-up[/]",
            f"[{style}]{tool.verdict}[/]",
            f"{tool.probes_run} probes",
            "",
            end_section=True,
        )
    console.print(table)
    counts = {v: sum(1 for t in report.tools if t.verdict == v) for v in VERDICT_STYLE}
    console.print(f"{len(report.tools)} tools: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    return 1 if counts["VIOLATES"] else 0


def cmd_scan(args: argparse.Namespace) -> int:
    from harness.checker.scanner import scan_target
    from harness.targets.registry import load_target

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
        err_console.print(f"{len(problems)} problems in {count} contracts", markup=False)
        return USER_ERROR_EXIT
    if drafts:  # valid, but a count over these contracts would silently lack the drafts
        err_console.print(
            f"{count} contracts valid; {len(drafts)} draft clauses are not counted", markup=False
        )
        return DRAFTS_EXIT
    console.print(f"{count} contracts valid")
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
    from harness.execution.freeze import read_record

    plan_path, plan, root = _plan(args)
    record = read_record(root, plan)
    exclude: set[str] = set()
    if record is not None:
        if not args.refreeze:
            raise UserError(
                Problem(
                    str(plan_path),
                    "freeze",
                    f"the plan is frozen "
                    f"(freeze {record.freeze_id}); drawing again changes its sample",
                    "pass --refreeze to draw from the pairs no freeze used",
                )
            )
        exclude = record.all_used()
    corpus = draw(plan, root, exclude)
    by_arm = Counter(pair.arm for pair in corpus.pairs)
    folder = corpus_dir(root, plan)
    console.print(
        f"drew {len(corpus.pairs)} pairs ("
        + ", ".join(f"{arm}: {n}" for arm, n in sorted(by_arm.items()))
        + f") into {folder}; review {folder / 'README.md'}, then `harness freeze {plan_path}`"
    )
    return 0


def cmd_freeze(args: argparse.Namespace) -> int:
    from harness.execution.draw import load_corpus
    from harness.execution.freeze import freeze, tag

    plan_path, plan, root = _plan(args)
    corpus = load_corpus(root, plan)
    record = freeze(plan_path, plan, root, [p.pair_id for p in corpus.pairs])
    console.print(
        f"froze plan {plan.name}: freeze {record.freeze_id} "
        f"({sum(len(v) for v in record.hashes.values())} files hashed)"
    )
    why = tag(root, record)
    if why:
        console.print(f"no git tag made ({why}); the committed freeze record is the authority")
    else:
        console.print(f"tagged freeze/{plan.name}/{record.freeze_id}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from harness.analysis import load_run_meta, main_tables
    from harness.execution.executors import executor_for
    from harness.execution.progress import RunProgress
    from harness.execution.runner import execute

    executor = executor_for(
        args.executor, workers=args.workers, scheduler=args.scheduler, batch_size=args.batch_size
    )
    progress = RunProgress(err_console)
    try:
        result = execute(
            Path(args.plan),
            post_hoc=args.post_hoc,
            progress=progress,
            executor=executor,
            checker=args.checker,
        )
    finally:
        progress.stop()
    label = " (POST HOC)" if any(r.post_hoc for r in result.rows) else ""
    console.print(
        f"{result.run_dir}: {result.scored} pairs scored now, "
        f"{result.skipped} already in the ledger{label}"
    )
    for table in main_tables(result.rows, load_run_meta(result.run_dir)):
        console.print(table)
    return 0


def cmd_baseline(args: argparse.Namespace) -> int:
    from harness.checker import ReferenceChecker
    from harness.execution.baseline import baseline

    rows = baseline(args.targets, Path(args.out), ReferenceChecker(seed=args.seed))
    counts = Counter(row["verdict"] for row in rows)
    console.print(
        f"{len(rows)} tools: "
        + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        + f"; wrote {args.out}/SUMMARY.md, tools.jsonl and reports/"
    )
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from harness.analysis import report

    result = report(Path(args.run_dir), Path(args.out) if args.out else None)
    for note in result.notes:
        console.print(f"note: {note}")
    console.print(
        f"wrote {len(result.tables)} table files, "
        + (f"{result.figure.name}, " if result.figure else "")
        + f"{result.macros.name} and {result.mutation_report.name} under {result.out_dir}"
    )
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.analysis import compare, comparison_table
    from harness.analysis.render import to_rich

    console.print(to_rich(comparison_table(compare(Path(args.run_a), Path(args.run_b)))))
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from harness.execution.publish import publish

    destination = publish(Path(args.run_dir))
    console.print(f"published {args.run_dir} to {destination}")
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
    check.set_defaults(func=cmd_check)

    scan = sub.add_parser("scan", help="static flags for a target's tools")
    scan.add_argument("target")
    scan.add_argument("--tool", action="append", help="scan only this tool (repeatable)")
    scan.add_argument("--json", nargs="?", const="-", metavar="FILE")
    scan.set_defaults(func=cmd_scan)

    draw = sub.add_parser("draw", help="draw a plan's mutants into mutants/<plan>/ for review")
    draw.add_argument("plan", help="plans/NAME.yaml")
    draw.add_argument(
        "--refreeze",
        action="store_true",
        help="draw anew for a frozen plan, from pairs no earlier freeze used",
    )
    draw.set_defaults(func=cmd_draw)

    freeze_cmd = sub.add_parser("freeze", help="hash every input of a drawn plan, record, tag")
    freeze_cmd.add_argument("plan")
    freeze_cmd.set_defaults(func=cmd_freeze)

    run = sub.add_parser("run", help="verify the freeze, score every pair, print the summary")
    run.add_argument("plan")
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
        help="pairs per Dask task (--executor dask only; default 8)",
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
    run.set_defaults(func=cmd_run)

    publish_cmd = sub.add_parser("publish", help="copy a finished run into results/reference/")
    publish_cmd.add_argument("run_dir")
    publish_cmd.set_defaults(func=cmd_publish)

    plan_cmd = sub.add_parser("plan", help="the plan JSON Schema, for editors")
    psub = plan_cmd.add_subparsers(dest="plan_command", required=True)
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
        "--out", required=True, help="folder to write, e.g. results/agentdojo-baseline"
    )
    base.add_argument("--seed", type=int, default=0)
    base.set_defaults(func=cmd_baseline)

    report_cmd = sub.add_parser("report", help="re-derive every table of a run from its ledger")
    report_cmd.add_argument("run_dir")
    report_cmd.add_argument("--out", help="folder for tables/, plot, macros (default: RUN_DIR)")
    report_cmd.set_defaults(func=cmd_report)

    compare_cmd = sub.add_parser(
        "compare", help="two runs per operator; claims only where the bounds separate"
    )
    compare_cmd.add_argument("run_a")
    compare_cmd.add_argument("run_b")
    compare_cmd.set_defaults(func=cmd_compare)

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

    contracts = sub.add_parser("contracts", help="validate contracts, export their JSON Schema")
    csub = contracts.add_subparsers(dest="contracts_command", required=True)
    validate = csub.add_parser("validate", help="check contracts against the installed target")
    validate.add_argument("paths", nargs="+", help="target names, contract files or folders")
    validate.set_defaults(func=cmd_validate)
    schema = csub.add_parser("schema", help="print the contract JSON Schema (for editors)")
    schema.add_argument("--output", default="-", help="file to write (default stdout)")
    schema.set_defaults(func=cmd_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except UserError as exc:
        for problem in exc.problems:
            err_console.print(f"error: {problem.line()}", markup=False, soft_wrap=True)
        return USER_ERROR_EXIT


if __name__ == "__main__":
    sys.exit(main())

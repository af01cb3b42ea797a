"""The `harness contracts coverage | corpus | agree` commands (argument handling and I/O)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.analysis.quality.agreement import (
    AgreementReport,
    compare_tool,
    compared_tools,
    load_set,
    load_strata,
    strata_figures,
)
from harness.analysis.quality.corpus import (
    generate_probes,
    merge,
    read_corpus,
    run_probe,
    write_corpus,
)
from harness.analysis.quality.coverage import (
    PUBLISHED_RUNS,
    CoverageReport,
    no_clause_misses,
    target_coverage,
)
from harness.analysis.quality.render import write_agreement, write_coverage
from harness.errors import Problem, UserError
from harness.targets.registry import Target, load_target

MIN_EXIT = 1  # a share below --min: the CI gate failed (bad input stays exit 2)


def _targets(names: list[str]) -> list[Target]:
    return [load_target(n) for n in names]


def cmd_coverage(args: argparse.Namespace) -> int:
    targets = _targets(args.targets)
    probes, digest = [], None
    if args.corpus:
        corpus, digest = read_corpus(Path(args.corpus))
        probes = corpus.probes
    runs = [Path(r) for r in (args.runs if args.runs is not None else PUBLISHED_RUNS)]
    for run in runs:
        if not (run / "ledger.jsonl").is_file():
            raise UserError(
                Problem(
                    str(run),
                    "ledger.jsonl",
                    "no ledger in this folder",
                    "give a run folder (results/reference/<plan>/<freeze>), or `--runs` with none",
                )
            )
    misses = no_clause_misses(runs)
    report = CoverageReport(
        seed=args.seed,
        corpus=digest,
        runs=[str(r) for r in runs],
        targets=[target_coverage(t, args.seed, probes, misses) for t in targets],
    )
    stem = args.name or "-".join(args.targets)
    for path in write_coverage(report, Path(args.out), stem):
        print(path)
    failed = False
    for target in report.targets:
        quoted, sentences = target.sentences
        constrained, written = target.paths
        surface = quoted / sentences if sentences else 1.0
        state = constrained / written if written else 1.0
        print(
            f"{target.target}: surface {quoted}/{sentences} ({surface:.2f}), "
            f"state {constrained}/{written} ({state:.2f})"
        )
        if args.min is not None and min(surface, state) < args.min:
            print(f"{target.target}: below --min {args.min}")
            failed = True
    return MIN_EXIT if failed else 0


def cmd_corpus(args: argparse.Namespace) -> int:
    targets = _targets(args.targets)
    sets = [load_set(s, targets) for s in (args.a, args.b)]
    by_name = {t.name: t for t in targets}
    proposals = []
    for label, contracts in zip((args.a, args.b), sets, strict=True):
        for (target, tool), contract in sorted(contracts.items()):
            if target in by_name and all((target, tool) in s for s in sets):
                proposals.append(
                    generate_probes(by_name[target].adapter, contract, args.seed, label)
                )
    named = []
    for path in args.recorded:
        read, sha = read_corpus(Path(path))
        proposals.append([p for p in read.probes if p.target in by_name])
        named.append(f"{path} (sha256 {sha})")
    built_by = (
        f"the union of the happy, violate:<pre> and variant:<arg> probes each of {args.a} and "
        f"{args.b} generates from a fresh environment (seed {args.seed}) for the tools both "
        "sets have"
    )
    if args.recorded:
        built_by += ", and the recorded calls of " + ", ".join(named)
    corpus = merge(
        proposals, built_by=built_by + ", each distinct call once, sorted", seed=args.seed
    )
    digest = write_corpus(corpus, Path(args.out))
    print(f"{args.out}: {len(corpus.probes)} probes, sha256 {digest}")
    return 0


def cmd_agree(args: argparse.Namespace) -> int:
    corpus, digest = read_corpus(Path(args.corpus))
    in_corpus = {p.target for p in corpus.probes}
    # --targets may name an adapter by package.module:Class (a benchmark not registered
    # under the entry point); the corpus and the contracts know it by its name
    loaded = _targets(args.targets or sorted(in_corpus))
    targets = [t for t in loaded if t.name in in_corpus]
    names = sorted(t.name for t in targets)
    a, b = load_set(args.a, targets), load_set(args.b, targets)
    strata = load_strata(Path(args.strata))
    compared = [k for k in compared_tools(a, b, corpus) if k[0] in names]
    missing = [f"{t}/{tool}" for t, tool in compared if (t, tool) not in strata]
    if missing:
        raise UserError(
            Problem(
                args.strata,
                ", ".join(missing),
                "no stratum declared",
                "add `target/tool: blind` or `target/tool: contaminated`",
            )
        )
    by_name = {t.name: t for t in targets}
    tools, disagreements, whole = [], [], []
    for target, tool in compared:
        adapter = by_name[target].adapter
        outcomes = [
            (i, run_probe(adapter, p))
            for i, p in enumerate(corpus.probes)
            if p.target == target and p.tool == tool
        ]
        record, found, whole_found = compare_tool(
            a[(target, tool)],
            b[(target, tool)],
            outcomes,
            adapter.volatile_paths(),
            strata[(target, tool)],
        )
        tools.append(record)
        disagreements += found
        whole += whole_found
    report = AgreementReport(
        set_a=args.a,
        set_b=args.b,
        corpus=args.corpus,
        corpus_sha256=digest,
        corpus_built_by=corpus.built_by,
        tools=tools,
        only_in_a=sorted(f"{t}/{x}" for t, x in set(a) - set(b) if t in names),
        only_in_b=sorted(f"{t}/{x}" for t, x in set(b) - set(a) if t in names),
        strata=strata_figures(tools),
        strata_tool_verdicts=strata_figures(tools, "tool_verdicts"),
        disagreements=disagreements,
        tool_verdict_disagreements=whole,
    )
    for path in write_agreement(report, Path(args.out)):
        print(path)
    for stratum, f in report.strata.items():
        w = report.strata_tool_verdicts[stratum]
        print(
            f"{stratum}: clause pairs {f.agree} of {f.n} agree (Wilson {f.low:.3f}–{f.high:.3f});"
            f" whole-contract verdicts {w.agree} of {w.n} (Wilson {w.low:.3f}–{w.high:.3f})"
        )
    return 0

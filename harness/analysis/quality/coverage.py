"""Contract coverage per tool and per target: surface sentences quoted, written state paths
constrained (see `surface` and `state` for the rules), clause counts by kind and tier, the
success signal, and beside them the `no_clause` misses measured on published runs."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.analysis.quality.corpus import Probe, generate_probes, run_probe
from harness.analysis.quality.state import signalled, written_paths
from harness.analysis.quality.surface import clause_quotes, covered, surface_sentences
from harness.checker.probes import compile_contract
from harness.contracts.model import CLAUSE_PREFIXES, Contract
from harness.targets.registry import Target

COVERAGE_SCHEMA_VERSION = 1
# The latest published exhaustive runs, whose `no_clause` misses the forecast sits beside.
PUBLISHED_RUNS = (
    "results/reference/closed_world_all/7799615fcfdb47c9",
    "results/reference/open_world_all/e8e21ca6902c9d97",
)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UncoveredSentence(_Record):
    surface: str
    text: str


class ToolCoverage(_Record):
    target: str
    tool: str
    sentences: int
    sentences_quoted: int
    uncovered: list[UncoveredSentence]
    probes: int = Field(description="probes run (generated, plus the corpus's for this tool)")
    probes_signalled: int = Field(description="of them, a success by the contract's signal")
    written_paths: list[str]
    constrained_paths: dict[str, list[str]] = Field(description="path -> the effects that catch it")
    unconstrained_paths: list[str]
    frame_declared_paths: list[str]
    clauses_by_kind: dict[str, int]
    clauses_by_tier: dict[str, int]
    biconditional: bool
    no_clause_misses: dict[str, int] = Field(
        default_factory=dict,
        description="run folder -> `no_clause` misses of this tool (absent: not scored there)",
    )

    @property
    def surface_share(self) -> float | None:
        return self.sentences_quoted / self.sentences if self.sentences else None

    @property
    def state_share(self) -> float | None:
        n = len(self.written_paths)
        return len(self.constrained_paths) / n if n else None


class TargetCoverage(_Record):
    target: str
    tools: list[ToolCoverage]

    @property
    def sentences(self) -> tuple[int, int]:
        return sum(t.sentences_quoted for t in self.tools), sum(t.sentences for t in self.tools)

    @property
    def paths(self) -> tuple[int, int]:
        return (
            sum(len(t.constrained_paths) for t in self.tools),
            sum(len(t.written_paths) for t in self.tools),
        )


class CoverageReport(_Record):
    schema_version: int = COVERAGE_SCHEMA_VERSION
    seed: int
    corpus: str | None = Field(default=None, description="sha256 of the corpus file read, if any")
    runs: list[str] = Field(description="run folders whose `no_clause` misses are shown")
    targets: list[TargetCoverage]


def clause_counts(contract: Contract) -> tuple[dict[str, int], dict[str, int]]:
    """Clauses by kind (the id prefix without its dot; success and reset as their own) and
    by derived tier."""
    kinds: Counter[str] = Counter()
    tiers: Counter[str] = Counter()
    for field, prefix in CLAUSE_PREFIXES.items():
        for clause in getattr(contract, field):
            kinds[prefix.rstrip(".")] += 1
            tiers[str(clause.tier)] += 1
    for name, cited in (("success", contract.success), ("reset", contract.reset)):
        if cited is not None:
            kinds[name] += 1
            tiers[str(cited.tier)] += 1
    return dict(sorted(kinds.items())), dict(sorted(tiers.items()))


def tool_coverage(
    target: Target, tool: str, seed: int = 0, extra_probes: Sequence[Probe] = ()
) -> ToolCoverage:
    adapter = target.adapter
    contract = target.contracts[tool]
    sentences = surface_sentences(adapter, contract)
    quotes = clause_quotes(contract)
    uncovered = [s for s in sentences if not covered(s.text, quotes)]
    partners = dict(target.contracts)
    probes = [*generate_probes(adapter, contract, seed, "generated", partners), *extra_probes]
    outcomes = [run_probe(adapter, p) for p in probes]
    compiled = compile_contract(contract, tuple(adapter.volatile_paths()))
    written = written_paths(compiled, outcomes)
    kinds, tiers = clause_counts(contract)
    return ToolCoverage(
        target=target.name,
        tool=tool,
        sentences=len(sentences),
        sentences_quoted=len(sentences) - len(uncovered),
        uncovered=[UncoveredSentence(surface=s.surface, text=s.text) for s in uncovered],
        probes=len(outcomes),
        probes_signalled=sum(signalled(compiled, o) for o in outcomes),
        written_paths=sorted(written),
        constrained_paths={
            p: sorted(w.constrained_by) for p, w in sorted(written.items()) if w.constrained_by
        },
        unconstrained_paths=sorted(p for p, w in written.items() if not w.constrained_by),
        frame_declared_paths=sorted(p for p, w in written.items() if w.frame_declared),
        clauses_by_kind=kinds,
        clauses_by_tier=tiers,
        biconditional=contract.success.biconditional,
    )


def no_clause_misses(run_dirs: Iterable[Path]) -> dict[str, dict[tuple[str, str], int]]:
    """Per run folder, the `no_clause` misses by (target, tool) for every tool the run
    scored (0 included), read from its ledger; a tool the run never scored is absent."""
    out: dict[str, dict[tuple[str, str], int]] = {}
    for run in run_dirs:
        counts: Counter[tuple[str, str]] = Counter()
        with (run / "ledger.jsonl").open(encoding="utf-8") as rows:
            for line in rows:
                row = json.loads(line)
                key = (row["target"], row["tool"])
                counts[key] += row.get("miss_cause") == "no_clause"
        out[str(run)] = dict(counts)
    return out


def target_coverage(
    target: Target,
    seed: int = 0,
    corpus: Sequence[Probe] = (),
    misses: dict[str, dict[tuple[str, str], int]] | None = None,
) -> TargetCoverage:
    tools = []
    for tool in sorted(target.contracts):
        extra = [p for p in corpus if p.target == target.name and p.tool == tool]
        record = tool_coverage(target, tool, seed, extra)
        record.no_clause_misses = {
            run: counts[(target.name, tool)]
            for run, counts in (misses or {}).items()
            if (target.name, tool) in counts
        }
        tools.append(record)
    return TargetCoverage(target=target.name, tools=tools)

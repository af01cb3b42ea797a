"""Authoring agreement: two contract sets for the same tools, graded on one probe corpus.

Pairing. Clauses of one tool pair by id; a clause left over pairs with a left-over clause
of the same kind (`pre`, `eff`, `frame`, `inv`) citing the same quote (whitespace runs
equal); `success` always pairs. Clauses left unpaired are listed. `arg.*`, `obs.*` and
`reset` are paired and listed too, but graded on no single probe (an argument's
effectiveness needs two calls; an observation clause, a call sequence), so they add no
comparison.

Grading one clause on one probe, under each set's own contract (its success signal, its
preconditions, its volatile paths), with the checker's rules (`harness.checker.dynamic`):
- `pre.X` false: CONFORMS when the call was refused and, if the contract says so, the
  state unchanged and the error type the named one; otherwise VIOLATES. True: the clause
  does not apply (n/a).
- the call is legal when every precondition is true; unknown when one cannot be evaluated
  (then `success`, `eff`, `frame`, `inv` are UNTESTABLE). On a legal call `success`
  CONFORMS when the call signalled success, else VIOLATES; on an illegal one, n/a.
- `eff`, `frame`, `inv` apply to a legal call that signalled success: an effect holds →
  CONFORMS; fails with the state changed, or with nothing changed under a biconditional
  signal → VIOLATES; fails with nothing changed otherwise → UNTESTABLE. A frame clause's
  scope changed outside its writes → VIOLATES. An invariant true before and false after →
  VIOLATES (false before: n/a). A predicate that cannot be evaluated → UNTESTABLE.

Agreement. A comparison is a (tool, clause pair, probe) where at least one side applies.
The two agree when their verdicts are equal and not UNTESTABLE: UNTESTABLE against
anything, UNTESTABLE included, is a disagreement, and so is n/a against a verdict (the
sets disagree on whether the clause speaks to the call). Figures are k of n with a Wilson
interval per tool and per declared stratum (blind, contaminated), never pooled across strata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.analysis.quality.corpus import ProbeCorpus, ProbeOutcome
from harness.analysis.quality.state import signalled
from harness.analysis.quality.surface import normalise
from harness.analysis.statistics import wilson_interval
from harness.checker.probes import CompiledClause, CompiledContract, compile_contract
from harness.contracts.loader import contract_files, load_contract, read_yaml
from harness.contracts.model import Contract
from harness.contracts.predicate import PredicateRuntimeError
from harness.errors import Problem, UserError
from harness.targets.equality import JSON, bind_pattern, diff, mask_state, parse_pattern

AGREEMENT_SCHEMA_VERSION = 1
NA = "n/a"
Stratum = Literal["blind", "contaminated"]
GRADED_KINDS = ("pre", "eff", "frame", "inv", "success")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- contract sets ---------------------------------------------------------------------------


ContractSet = dict[tuple[str, str], Contract]


def load_set(where: str, targets: Sequence[Any] = ()) -> ContractSet:
    """A folder of contract files (any depth, keyed by each file's target and tool), or
    `shipped`: the contracts of `targets` as their adapters ship them."""
    if where == "shipped":
        return {(t.name, tool): c for t in targets for tool, c in t.contracts.items()}
    folder = Path(where)
    if not folder.is_dir():
        raise UserError(
            Problem(
                where,
                "contract set",
                "is not a folder",
                "give a folder of contract YAML files, or `shipped`",
            )
        )
    out: ContractSet = {}
    seen: dict[tuple[str, str], Path] = {}
    for path in contract_files([folder]):
        contract = load_contract(path).without_drafts()
        key = (contract.target, contract.tool)
        if key in seen:
            raise UserError(
                Problem(
                    str(path),
                    "tool",
                    f"second contract for {key[0]}/{key[1]} (first: {seen[key]})",
                    "keep one contract per tool in a set",
                )
            )
        seen[key] = path
        out[key] = contract
    return out


def load_strata(path: Path) -> dict[tuple[str, str], Stratum]:
    """`target/tool: blind` or `target/tool: contaminated`, one line per compared tool."""
    raw = read_yaml(path) or {}  # unreadable, malformed, or a key written twice: one line
    if not isinstance(raw, dict):
        raise UserError(
            Problem(
                str(path), "<top>", "is not a mapping", "write `target/tool: blind`, one per line"
            )
        )
    out: dict[tuple[str, str], Stratum] = {}
    problems = []
    for key, value in raw.items():
        if (
            not isinstance(key, str)
            or key.count("/") != 1
            or value not in ("blind", "contaminated")
        ):
            problems.append(
                Problem(
                    str(path),
                    str(key),
                    f"{value!r} is not a stratum",
                    "write `target/tool: blind` or `target/tool: contaminated`",
                )
            )
            continue
        target, tool = key.split("/")
        out[(target, tool)] = value
    if problems:
        raise UserError(problems)
    return out


# --- pairing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Clause:
    """One clause of a contract as pairing sees it."""

    id: str
    kind: str
    quote: str | None


def clauses_of(contract: Contract) -> list[Clause]:
    out = []
    for field in ("preconditions", "effects", "frame", "invariants", "arguments", "observations"):
        for c in getattr(contract, field):
            quote = normalise(c.provenance.quote) if c.provenance else None
            out.append(Clause(c.id, c.id.split(".", 1)[0], quote))
    out.append(Clause("success", "success", None))
    if contract.reset is not None:
        out.append(Clause("reset", "reset", None))
    return out


class ClausePair(_Record):
    a: str
    b: str
    by: Literal["id", "quote"]
    graded: bool


class Pairing(_Record):
    pairs: list[ClausePair]
    only_a: list[str]
    only_b: list[str]


def pair_clauses(a: Contract, b: Contract) -> Pairing:
    left, right = clauses_of(a), clauses_of(b)
    right_ids = {c.id for c in right}
    pairs = [
        ClausePair(a=c.id, b=c.id, by="id", graded=c.kind in GRADED_KINDS)
        for c in left
        if c.id in right_ids
    ]
    taken = {p.a for p in pairs}
    rest_b = [c for c in right if c.id not in taken]
    only_a = []
    for c in left:
        if c.id in taken:
            continue
        match = next(
            (r for r in rest_b if c.quote and r.kind == c.kind and r.quote == c.quote), None
        )
        if match is None:
            only_a.append(c.id)
            continue
        rest_b.remove(match)
        pairs.append(ClausePair(a=c.id, b=match.id, by="quote", graded=c.kind in GRADED_KINDS))
    return Pairing(pairs=pairs, only_a=only_a, only_b=[c.id for c in rest_b])


# --- grading one clause on one probe -----------------------------------------------------------


class Graded(_Record):
    verdict: str = Field(description="CONFORMS, VIOLATES, UNTESTABLE or n/a")
    detail: str = ""


class Side:
    """One contract compiled, grading clauses on probe outcomes (module docstring)."""

    def __init__(self, contract: Contract, adapter_volatile: Sequence[str]):
        self.contract = contract
        self.compiled: CompiledContract = compile_contract(contract, tuple(adapter_volatile))
        self.masks = [parse_pattern(p) for p in self.compiled.volatile]
        self.by_id: dict[str, CompiledClause] = {
            c.id: c
            for c in (
                *self.compiled.preconditions,
                *self.compiled.effects,
                *self.compiled.invariants,
            )
        }

    def grade(self, clause_id: str, run: ProbeOutcome) -> Graded:
        pre, post = mask_state(run.pre, self.masks), mask_state(run.post, self.masks)
        bindings: dict[str, JSON] = {
            "pre": pre,
            "post": post,
            "args": run.probe.args,
            "result": run.outcome.result,
        }
        changed = bool(diff(pre, post, limit=1))
        kind = clause_id.split(".", 1)[0]
        if kind == "pre":
            return self._precondition(self.by_id[clause_id], bindings, run, changed)
        legal = self._legal(bindings)
        if legal is None:
            return Graded(verdict="UNTESTABLE", detail="a precondition cannot be evaluated")
        if not legal:
            return Graded(verdict=NA, detail="a precondition is false: not a legal call")
        said = signalled(self.compiled, run)
        if kind == "success":
            if said:
                return Graded(verdict="CONFORMS", detail="legal call, success signalled")
            return Graded(verdict="VIOLATES", detail=_refusal(run))
        if not said:
            return Graded(verdict=NA, detail="legal call refused: " + _refusal(run))
        if kind == "eff":
            return self._effect(self.by_id[clause_id], bindings, changed)
        if kind == "frame":
            return self._frame(clause_id, pre, post, run.probe.args)
        if kind == "inv":
            return self._invariant(self.by_id[clause_id], bindings)
        raise ValueError(f"{clause_id} is graded on no single probe")

    def _legal(self, bindings: Mapping[str, JSON]) -> bool | None:
        truths = [_truth(c, bindings) for c in self.compiled.preconditions]
        if any(t is None for t in truths):
            return None
        return all(truths)

    def _precondition(
        self, clause: CompiledClause, bindings: Mapping[str, JSON], run: ProbeOutcome, changed: bool
    ) -> Graded:
        truth = _truth(clause, bindings)
        if truth is None:
            return Graded(verdict="UNTESTABLE", detail="the precondition cannot be evaluated")
        if truth:
            return Graded(verdict=NA, detail="the precondition holds")
        expect = self.contract.on_precondition_violation
        problems = []
        if expect.error and signalled(self.compiled, run):
            problems.append("the precondition is false but the call succeeded")
        if expect.state_unchanged and changed:
            problems.append("the precondition is false but the state changed")
        if (
            expect.error_type
            and not run.outcome.success
            and run.outcome.error_type != expect.error_type
        ):
            problems.append(f"refused with {run.outcome.error_type}, not {expect.error_type}")
        if problems:
            return Graded(verdict="VIOLATES", detail="; ".join(problems))
        return Graded(verdict="CONFORMS", detail="precondition false, call refused")

    def _effect(
        self, clause: CompiledClause, bindings: Mapping[str, JSON], changed: bool
    ) -> Graded:
        truth = _truth(clause, bindings)
        if truth is None:
            return Graded(verdict="UNTESTABLE", detail="the effect cannot be evaluated")
        if truth:
            return Graded(verdict="CONFORMS", detail="the effect holds")
        if changed:
            return Graded(verdict="VIOLATES", detail="the effect fails although the state changed")
        if self.contract.success.biconditional:
            return Graded(verdict="VIOLATES", detail="success signalled, nothing changed")
        return Graded(
            verdict="UNTESTABLE", detail="nothing changed; not biconditional (effect_absent)"
        )

    def _frame(self, clause_id: str, pre: JSON, post: JSON, args: Mapping[str, JSON]) -> Graded:
        clause = next(c for c in self.contract.frame if c.id == clause_id)
        writes = [bind_pattern(p, args) for p in clause.writes]
        scopes = [bind_pattern(p, args) for p in clause.scope]
        outside = [
            d.dotted()
            for d in diff(pre, post, masks=writes)
            if any(
                len(s) <= len(d.path)
                and all(seg in ("*", str(k)) for seg, k in zip(s, d.path, strict=False))
                for s in scopes
            )
        ]
        if outside:
            return Graded(
                verdict="VIOLATES", detail="changed outside the writes: " + ", ".join(outside[:5])
            )
        return Graded(verdict="CONFORMS", detail="nothing changed outside the writes")

    def _invariant(self, clause: CompiledClause, bindings: Mapping[str, JSON]) -> Graded:
        before = _truth(clause, {**bindings, "post": bindings["pre"]})
        if before is None:
            return Graded(verdict="UNTESTABLE", detail="the invariant cannot be evaluated")
        if not before:
            return Graded(verdict=NA, detail="the invariant is false before the call")
        after = _truth(clause, bindings)
        if after is None:
            return Graded(verdict="UNTESTABLE", detail="the invariant cannot be evaluated after")
        if after:
            return Graded(verdict="CONFORMS", detail="the invariant holds after the call")
        return Graded(verdict="VIOLATES", detail="the invariant held before and fails after")


def _truth(clause: CompiledClause, bindings: Mapping[str, JSON]) -> bool | None:
    try:
        return bool(clause.predicate.holds(bindings))
    except PredicateRuntimeError:
        return None


def _refusal(run: ProbeOutcome) -> str:
    o = run.outcome
    if not o.success:
        return f"refused ({o.error_type}: {o.error_message})"
    return f"the result does not signal success: {o.result!r}"[:300]


# --- the comparison ----------------------------------------------------------------------------


class ProbeWitness(_Record):
    index: int = Field(description="position of the probe in the corpus")
    kind: str
    args: dict[str, Any]
    success: bool
    result: Any = None
    error: str | None = None
    state_diff: list[str] = Field(description="changed paths (first 10)")


class Disagreement(_Record):
    target: str
    tool: str
    stratum: str
    a: str
    b: str
    paired_by: str
    probe: ProbeWitness
    verdict_a: Graded
    verdict_b: Graded


class Figure(_Record):
    agree: int
    n: int
    low: float
    high: float

    @classmethod
    def of(cls, agree: int, n: int) -> Figure:
        low, high = wilson_interval(agree, n)
        return cls(agree=agree, n=n, low=low, high=high)


class ToolVerdictDisagreement(_Record):
    """The whole contract's verdict on one probe differs: every graded clause counts,
    paired or not."""

    target: str
    tool: str
    stratum: str
    probe: ProbeWitness
    verdict_a: str
    verdict_b: str
    violated_a: list[str]
    violated_b: list[str]


class ToolAgreement(_Record):
    target: str
    tool: str
    stratum: str
    probes: int
    pairing: Pairing
    neither_applies: int = Field(description="(clause pair, probe) where both sides said n/a")
    figure: Figure
    tool_verdicts: Figure = Field(
        description="the whole contract's verdict per probe (all graded clauses, paired or "
        "not): VIOLATES if one violates, else CONFORMS if one conforms, else UNTESTABLE if "
        "one is, else n/a; probes where both are n/a left out"
    )


class AgreementReport(_Record):
    schema_version: int = AGREEMENT_SCHEMA_VERSION
    set_a: str
    set_b: str
    corpus: str = Field(description="the corpus file read")
    corpus_sha256: str
    corpus_built_by: str
    tools: list[ToolAgreement]
    only_in_a: list[str]
    only_in_b: list[str]
    strata: dict[str, Figure]
    strata_tool_verdicts: dict[str, Figure]
    disagreements: list[Disagreement]
    tool_verdict_disagreements: list[ToolVerdictDisagreement]


def graded_ids(contract: Contract) -> list[str]:
    return [c.id for c in clauses_of(contract) if c.kind in GRADED_KINDS]


def roll_up(verdicts: dict[str, Graded]) -> str:
    """One probe's verdict for the whole contract (see ToolAgreement.tool_verdicts)."""
    values = {g.verdict for g in verdicts.values()}
    for verdict in ("VIOLATES", "CONFORMS", "UNTESTABLE"):
        if verdict in values:
            return verdict
    return NA


def compare_tool(
    a: Contract,
    b: Contract,
    outcomes: Sequence[tuple[int, ProbeOutcome]],
    adapter_volatile: Sequence[str],
    stratum: str,
) -> tuple[ToolAgreement, list[Disagreement], list[ToolVerdictDisagreement]]:
    pairing = pair_clauses(a, b)
    side_a, side_b = Side(a, adapter_volatile), Side(b, adapter_volatile)
    agree = n = neither = 0
    whole_agree = whole_n = 0
    found = []
    whole_found = []
    for index, run in outcomes:
        all_a = {cid: side_a.grade(cid, run) for cid in graded_ids(a)}
        all_b = {cid: side_b.grade(cid, run) for cid in graded_ids(b)}
        ta, tb = roll_up(all_a), roll_up(all_b)
        if not (ta == NA and tb == NA):
            whole_n += 1
            if ta == tb and ta != "UNTESTABLE":
                whole_agree += 1
            else:
                whole_found.append(
                    ToolVerdictDisagreement(
                        target=a.target,
                        tool=a.tool,
                        stratum=stratum,
                        probe=_witness(index, run),
                        verdict_a=ta,
                        verdict_b=tb,
                        violated_a=[c for c, g in all_a.items() if g.verdict == "VIOLATES"],
                        violated_b=[c for c, g in all_b.items() if g.verdict == "VIOLATES"],
                    )
                )
        for pair in pairing.pairs:
            if not pair.graded:
                continue
            va, vb = all_a[pair.a], all_b[pair.b]
            if va.verdict == NA and vb.verdict == NA:
                neither += 1
                continue
            n += 1
            if va.verdict == vb.verdict and va.verdict != "UNTESTABLE":
                agree += 1
                continue
            found.append(
                Disagreement(
                    target=a.target,
                    tool=a.tool,
                    stratum=stratum,
                    a=pair.a,
                    b=pair.b,
                    paired_by=pair.by,
                    probe=_witness(index, run),
                    verdict_a=va,
                    verdict_b=vb,
                )
            )
    record = ToolAgreement(
        target=a.target,
        tool=a.tool,
        stratum=stratum,
        probes=len(outcomes),
        pairing=pairing,
        neither_applies=neither,
        figure=Figure.of(agree, n),
        tool_verdicts=Figure.of(whole_agree, whole_n),
    )
    return record, found, whole_found


def _witness(index: int, run: ProbeOutcome) -> ProbeWitness:
    o = run.outcome
    return ProbeWitness(
        index=index,
        kind=run.probe.kind,
        args=run.probe.args,
        success=o.success,
        result=o.result if o.success else None,
        error=None if o.success else f"{o.error_type}: {o.error_message}",
        state_diff=[d.dotted() for d in diff(run.pre, run.post, limit=10)],
    )


def strata_figures(tools: Sequence[ToolAgreement], measure: str = "figure") -> dict[str, Figure]:
    """k of n per stratum, summed over that stratum's tools only (strata never pool)."""
    out: dict[str, Figure] = {}
    for stratum in sorted({t.stratum for t in tools}):
        mine = [getattr(t, measure) for t in tools if t.stratum == stratum]
        out[stratum] = Figure.of(sum(f.agree for f in mine), sum(f.n for f in mine))
    return out


def compared_tools(a: ContractSet, b: ContractSet, corpus: ProbeCorpus) -> list[tuple[str, str]]:
    in_corpus = {(p.target, p.tool) for p in corpus.probes}
    return sorted(set(a) & set(b) & in_corpus)

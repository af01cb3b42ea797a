"""The contract model: one YAML file per tool, validated by these pydantic models.

A clause states one thing the tool promises and cites where that promise is made
(provenance) or says it is `inferred`. Its tier is derived from that, never typed.
Structural rules that need no installed target (ids, prefixes, the biconditional
justification, argument declarations) are checked here; rules that need the installed
source or a fresh snapshot live in `harness.contracts.validator`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.contracts.labels import FailureLabel

CONTRACT_SCHEMA_VERSION = 1


class Surface(StrEnum):
    """Where a promise is made."""

    DOCSTRING = "docstring"
    SCHEMA = "schema"
    TOOL_RETURN = "tool_return"
    PROMPT_TEMPLATE = "prompt_template"
    README = "readme"
    EXTERNAL_STANDARD = "external_standard"
    MAINTAINER_ANNOTATION = "maintainer_annotation"
    # The domain policy the agent's system prompt carries (tau2's policy.txt): agent-visible.
    POLICY = "policy"


# The design's tier rule: what an agent (or the person building one) can read. A README
# and an external standard are published with the benchmark; a maintainer's annotation is not.
AGENT_VISIBLE_SURFACES = frozenset(
    {
        Surface.DOCSTRING,
        Surface.SCHEMA,
        Surface.TOOL_RETURN,
        Surface.PROMPT_TEMPLATE,
        Surface.README,
        Surface.EXTERNAL_STANDARD,
        Surface.POLICY,
    }
)


class Tier(StrEnum):
    AGENT_VISIBLE = "agent_visible"
    MAINTAINER_ANNOTATED = "maintainer_annotated"
    INFERRED = "inferred"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Provenance(_Strict):
    """A verbatim quote at a file and line of the installed target's source. A quote may
    span lines: it starts on `line`, and line breaks and indentation in the source match
    any run of whitespace in the quote."""

    surface: Surface
    quote: str = Field(min_length=1)
    file: str = Field(description="Path relative to the target's source root: toy_domain/bank.py")
    line: int = Field(ge=1)


class _Cited(_Strict):
    """Something that cites a provenance or declares itself inferred (exactly one)."""

    provenance: Provenance | None = None
    inferred: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> _Cited:
        if (self.provenance is None) == (not self.inferred):
            raise ValueError(
                "give exactly one of `provenance: {surface, quote, file, line}` or `inferred: true`"
            )
        return self

    @property
    def tier(self) -> Tier:
        if self.inferred or self.provenance is None:
            return Tier.INFERRED
        if self.provenance.surface in AGENT_VISIBLE_SURFACES:
            return Tier.AGENT_VISIBLE
        return Tier.MAINTAINER_ANNOTATED


class PredicateClause(_Cited):
    """A precondition, effect or invariant: a predicate over pre, post, args, result."""

    id: str
    text: str = Field(min_length=1)
    predicate: str = Field(min_length=1)


class FrameClause(_Cited):
    """Within `scope`, nothing but the `writes` paths may change on a successful call."""

    id: str
    text: str = Field(min_length=1)
    scope: list[str] = Field(min_length=1, description="Path patterns the clause covers")
    writes: list[str] = Field(default_factory=list, description="Path patterns that may change")


class ArgumentClause(_Cited):
    """`arg.NAME`: the argument NAME is effective, its value reaches the state."""

    id: str
    text: str = Field(min_length=1)

    @property
    def argument(self) -> str:
        return self.id.removeprefix("arg.")


ArgType = Literal[
    "str",
    "int",
    "float",
    "bool",
    "list",
    "dict",
    "str|None",
    "int|None",
    "float|None",
    "bool|None",
    "list|None",
    "dict|None",
]


class ArgumentSpec(_Strict):
    type: ArgType
    effective: bool = False
    default: Any = Field(default=None, description="Default value; only with `optional: true`")
    optional: bool = False
    probe_values: list[Any] = Field(default_factory=list)
    pool: Literal["harvested", "declared"] = Field(
        default="harvested",
        description="declared: probe only `probe_values` (not values harvested from the state)",
    )

    @property
    def base_type(self) -> str:
        return self.type.removesuffix("|None")

    @property
    def nullable(self) -> bool:
        return self.type.endswith("|None")


class SourceSpan(_Strict):
    file: str
    function: str = Field(description="Name of the tool's function in `file`")
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)


class SuccessSignal(_Cited):
    """How the tool says it succeeded. `biconditional`: success is said iff the effects happen."""

    signal: Literal["no_error", "result"] = "no_error"
    predicate: str | None = Field(default=None, description="Over `result`; with signal: result")
    biconditional: bool = False
    justification: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SuccessSignal:
        if self.signal == "result" and not self.predicate:
            raise ValueError("`signal: result` needs a `predicate` over `result`")
        if self.signal == "no_error" and self.predicate:
            raise ValueError("`predicate` only goes with `signal: result`")
        if self.biconditional and not (self.justification and self.justification.strip()):
            raise ValueError("`biconditional: true` needs a `justification` saying why")
        return self


class PreconditionViolation(_Strict):
    """What a call with a false precondition must produce. It cites no surface: a clause
    broken only in its `state_unchanged` part (the call was refused, the state changed
    anyway) is an inferred finding (`Contract.refusal_tier`)."""

    error: bool = True
    state_unchanged: bool = True
    error_type: str | None = None


class ResetExpectation(_Cited):
    """`restores_initial`: after reset the snapshot equals a fresh environment's."""

    restores_initial: bool = True


DRAFT_SUFFIX = "_draft"
DRAFT_PREDICATE = "True"


def is_draft(clause_id: str) -> bool:
    """A draft clause (`eff.sends_draft`) is a placeholder a scaffold wrote: no count,
    no checker and no score ever sees it until a person writes it and drops the suffix."""
    return clause_id.endswith(DRAFT_SUFFIX)


OBSERVATION_ROOTS = frozenset({"pre", "args", "issued", "now"})


class VirtualClock(_Strict):
    """The environment's clock: a state path, and the tool and argument that advance it."""

    path: str = Field(description="Dotted state path of the clock, e.g. storage.now")
    advance_tool: str
    advance_argument: str


class ObservationClause(_Cited):
    """`obs.*`: an artifact issued by one tool constrains a later call of this one.

    `predicate` (over `pre`, `args`, `issued` = the issuing call's result, `now` = the
    clock in `pre`) says when the call must be accepted: a validity clause over the clock
    (`now < issued.expires_at`), an integrity clause over the bytes of the argument
    `artifact` (`sha256(args.url) == pre.storage.issued[issued.nonce].digest`). Accepted
    when it is false, or refused when it is true, VIOLATES with this clause's `label`."""

    id: str
    text: str = Field(min_length=1)
    axis: Literal["validity", "integrity"]
    label: FailureLabel = Field(
        description="The failure the clause cites, one of the 15 of `harness.contracts.labels`"
    )
    issued_by: str = Field(description="The tool whose call issues the artifact")
    artifact: str | None = Field(
        default=None, description="The argument carrying the artifact; none for a call window"
    )
    artifact_from: str | None = Field(
        default=None, description="Key of the issuing call's result that holds the artifact"
    )
    predicate: str = Field(min_length=1)
    clock: VirtualClock | None = None

    @model_validator(mode="after")
    def _complete(self) -> ObservationClause:
        if (self.artifact is None) != (self.artifact_from is None):
            raise ValueError("give both `artifact` and `artifact_from`, or neither")
        if self.axis == "validity" and self.clock is None:
            raise ValueError("a validity clause needs `clock: {path, advance_tool, ...}`")
        if self.axis == "integrity" and self.artifact is None:
            raise ValueError("an integrity clause needs the `artifact` argument it checks")
        return self


CLAUSE_PREFIXES = {
    "preconditions": "pre.",
    "effects": "eff.",
    "frame": "frame.",
    "arguments": "arg.",
    "invariants": "inv.",
    "observations": "obs.",
}


class Contract(_Strict):
    schema_version: Literal[1] = CONTRACT_SCHEMA_VERSION
    tool: str
    target: str
    source: SourceSpan
    signature: dict[str, ArgumentSpec] = Field(default_factory=dict)
    preconditions: list[PredicateClause] = Field(default_factory=list)
    effects: list[PredicateClause] = Field(default_factory=list)
    frame: list[FrameClause] = Field(default_factory=list)
    arguments: list[ArgumentClause] = Field(default_factory=list)
    invariants: list[PredicateClause] = Field(default_factory=list)
    observations: list[ObservationClause] = Field(default_factory=list)
    success: SuccessSignal
    on_precondition_violation: PreconditionViolation = PreconditionViolation()
    reset: ResetExpectation | None = None
    volatile: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _structure(self) -> Contract:
        seen: set[str] = set()
        for field, prefix in CLAUSE_PREFIXES.items():
            for clause in getattr(self, field):
                if not clause.id.startswith(prefix) or len(clause.id) == len(prefix):
                    raise ValueError(f"{field}: clause id {clause.id!r} must start with {prefix!r}")
                if clause.id in seen:
                    raise ValueError(f"{field}: clause id {clause.id!r} is used twice")
                if field == "arguments" and is_draft(clause.id):
                    raise ValueError(f"{field}: {clause.id!r}: argument clauses have no drafts")
                if is_draft(clause.id) and getattr(clause, "predicate", None) not in (
                    None,
                    DRAFT_PREDICATE,
                ):
                    raise ValueError(
                        f"{field}: {clause.id!r} has a predicate but is still marked draft; "
                        f"drop the {DRAFT_SUFFIX!r} suffix from its id"
                    )
                seen.add(clause.id)
        effective = {name for name, spec in self.signature.items() if spec.effective}
        declared = {c.argument for c in self.arguments}
        for clause in self.observations:
            if clause.artifact is not None and clause.artifact not in self.signature:
                raise ValueError(
                    f"observations: {clause.id} artifact {clause.artifact!r} names no argument "
                    "of the signature"
                )
        for name in sorted(declared - set(self.signature)):
            raise ValueError(f"arguments: arg.{name} names no argument of the signature")
        for name in sorted(effective - declared):
            raise ValueError(
                f"signature.{name}: effective argument needs an `arg.{name}` clause in arguments"
            )
        for name in sorted(declared - effective):
            raise ValueError(f"arguments: arg.{name} declared but signature.{name} lacks effective")
        for name, spec in self.signature.items():
            if spec.default is not None and not spec.optional:
                raise ValueError(f"signature.{name}: a default needs `optional: true`")
        return self

    def predicate_clauses(self) -> list[tuple[str, PredicateClause]]:
        """(field, clause) for every clause that carries a predicate."""
        return [
            (field, c)
            for field in ("preconditions", "effects", "invariants")
            for c in getattr(self, field)
        ]

    def clause_ids(self) -> list[str]:
        return [c.id for field in CLAUSE_PREFIXES for c in getattr(self, field)]

    def clause_tier(self, clause_id: str) -> Tier:
        """The derived tier of a clause by id, `success` and `reset` included; an id the
        contract does not have (a checker's own rule) is inferred."""
        if clause_id == "success":
            return self.success.tier
        if clause_id == "reset":
            return self.reset.tier if self.reset is not None else Tier.INFERRED
        for field in CLAUSE_PREFIXES:
            for clause in getattr(self, field):
                if clause.id == clause_id:
                    tier: Tier = clause.tier
                    return tier
        return Tier.INFERRED

    @property
    def refusal_tier(self) -> Tier:
        """The tier of "a refused call leaves the state unchanged" (on_precondition_violation
        has no provenance field, so no surface stands behind it)."""
        return Tier.INFERRED

    def draft_ids(self) -> list[str]:
        return [i for i in self.clause_ids() if is_draft(i)]

    def without_drafts(self) -> Contract:
        """This contract as every checker and count sees it: draft clauses removed."""
        if not self.draft_ids():
            return self
        kept = {
            field: [c for c in getattr(self, field) if not is_draft(c.id)]
            for field in CLAUSE_PREFIXES
        }
        return self.model_copy(update=kept)

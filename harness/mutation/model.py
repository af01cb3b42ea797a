"""Mutation records and the operator interface.

A *site* is one function of the target's source (a tool, or a helper or model method a tool
calls). An *operator* looks at a site's source text and offers numbered occurrences; each
occurrence yields the mutated text of that one function. Operators work on text so each
can use the parser it needs (stdlib ast, parso for Cosmic Ray, libcst for mutmut).
A *mutant* is one such change, identified by its content; a *pair* is (mutant, tool).
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from harness.defects import DefectClass


class Arm(StrEnum):
    CLOSED_WORLD = "closed_world"
    CONTROLS = "controls"
    OPEN_WORLD = "open_world"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FunctionSite(_Frozen):
    """One function of the installed target source."""

    module: str = Field(description="Dotted module name, e.g. toy_domain.bank")
    file: str = Field(description="Path relative to the adapter's source root")
    qualname: str = Field(description="transfer, or Bank._debit for a method")
    start_line: int = Field(description="First line (the first decorator, if any)")
    end_line: int
    source_hash: str = Field(description="SHA-256 of the function's source text")


class SiteContext(_Frozen):
    """What an operator may know about a site beyond its text."""

    tool: str
    is_tool_function: bool = Field(description="The tool itself, not a helper it calls")
    is_reset: bool = Field(description="Part of the target's reset path")
    injected: frozenset[str] = frozenset()
    effective_arguments: frozenset[str] = frozenset()
    invariant_fields: frozenset[str] = Field(
        default=frozenset(), description="Attribute/key names the contract's invariants read"
    )
    writer_names: frozenset[str] = Field(
        default=frozenset(),
        description=(
            "Functions/methods of the module that write state that is not volatile, directly "
            "or through another writer (a helper that only writes volatile fields is not one)"
        ),
    )
    clock_fields: frozenset[str] = Field(
        default=frozenset(),
        description=(
            "The last attribute/key name of the clock path of each observation clause of the "
            "tool's contract (`storage.now` -> `now`): a guard reading one is a validity guard"
        ),
    )
    refusal_returns: frozenset[str] = Field(
        default=frozenset(),
        description=(
            "`ast.unparse` of each returned value of the site's function that is a refusal "
            "(`harness.mutation.refusals`): `if COND: return <one of these>` is a guard"
        ),
    )
    volatile_fields: frozenset[str] = Field(
        default=frozenset(),
        description=(
            "The last attribute/key name of each volatile path pattern of the adapter and of "
            "the tool's contract (`bank.last_activity` -> `last_activity`; trailing `*` and "
            "`{args.x}` segments are skipped). Every comparison masks these paths, so a state "
            "write whose written fields all lie among them is not an effect"
        ),
    )


# The functions most operator examples start from (`OperatorExample.before`).
WITHDRAW = """\
def withdraw(bank, account, amount):
    if amount > bank.balances[account]:
        raise ValueError("insufficient funds")
    bank.balances[account] -= amount
    return "ok"
"""
TRANSFER = """\
def transfer(bank, src, dst, amount):
    bank.balances[src] -= amount
    bank.balances[dst] += amount
    return "done"
"""

_EXAMPLE_CONTEXT = SiteContext(tool="example", is_tool_function=True, is_reset=False)


class OperatorExample(_Frozen):
    """What an operator does, in four lines: `mutate(before, context, occurrence) == after`.
    `after` None: the operator offers no such occurrence on `before` (a near miss it skips).
    `tests/test_operator_examples.py` runs every registered operator's examples."""

    before: str
    after: str | None
    occurrence: int = 0
    context: SiteContext = _EXAMPLE_CONTEXT


def example(
    before: str, after: str | None, occurrence: int = 0, **context: object
) -> OperatorExample:
    """An example; `context` sets `SiteContext` fields (frozensets given as any iterable)."""
    fields = {
        k: frozenset(v) if isinstance(v, list | set | tuple) else v for k, v in context.items()
    }
    return OperatorExample(
        before=before,
        after=after,
        occurrence=occurrence,
        context=_EXAMPLE_CONTEXT.model_copy(update=fields) if fields else _EXAMPLE_CONTEXT,
    )


@runtime_checkable
class Operator(Protocol):
    """A mutation operator: small, stateless, registered by name, with examples."""

    name: str
    arm: Arm
    defect_class: DefectClass | None
    examples: tuple[OperatorExample, ...]

    def occurrences(self, source: str, context: SiteContext) -> int:
        """How many distinct mutations this operator offers on the function `source`
        (dedented text of one def, decorators included)."""
        ...

    def mutate(self, source: str, context: SiteContext, occurrence: int) -> str:
        """The mutated text of the whole function for occurrence `occurrence`
        (0 <= occurrence < occurrences). May be text that does not compile."""
        ...


class Mutant(_Frozen):
    """One code change to one function, with its unified diff against the installed file."""

    id: str
    arm: Arm
    operator: str
    defect_class: DefectClass | None
    target: str
    target_version: str
    site: FunctionSite
    occurrence: int
    mutated_source: str = Field(description="The mutated function text, dedented")
    diff: str


class Pair(_Frozen):
    """A mutant scored against one tool whose call reaches the mutated function."""

    mutant: Mutant
    tool: str

    @property
    def id(self) -> str:
        return f"{self.mutant.id}:{self.tool}"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def mutant_id(
    target_version: str, site: FunctionSite, operator: str, occurrence: int, mutated_source: str
) -> str:
    """Content-derived: the same change to the same source gets the same id everywhere."""
    material = "\0".join(
        [
            target_version,
            site.file,
            site.qualname,
            operator,
            str(occurrence),
            site.source_hash,
            sha256_text(mutated_source),
        ]
    )
    return sha256_text(material)[:16]

"""Enumerating pairs: every (mutant, tool) the given operators offer on the functions each
tool's call reaches, in a deterministic order."""

from __future__ import annotations

import ast
import difflib
import functools
from collections.abc import Iterable
from pathlib import Path

from harness.defects import DefectClass
from harness.mutation.model import (
    FunctionSite,
    Mutant,
    Operator,
    Pair,
    SiteContext,
    mutant_id,
)
from harness.mutation.registry import get_operator
from harness.mutation.sites import (
    changed_statements,
    function_source,
    reset_sites,
    restored_fields,
    site_context,
    site_key,
    tool_sites,
    volatile_fields,
    written_fields,
)
from harness.targets.registry import Target


def render_file(site: FunctionSite, mutated_source: str, root: Path) -> str:
    """The whole installed file with the site's lines replaced by `mutated_source`,
    re-indented to the function's original indentation."""
    lines = (Path(root) / site.file).read_text(encoding="utf-8").splitlines(keepends=True)
    first = lines[site.start_line - 1]
    indent = first[: len(first) - len(first.lstrip())]
    body = [
        indent + line if line.strip() else line for line in mutated_source.splitlines(keepends=True)
    ]
    if body and not body[-1].endswith("\n"):
        body[-1] += "\n"
    return "".join([*lines[: site.start_line - 1], *body, *lines[site.end_line :]])


def unified_diff(site: FunctionSite, mutated_source: str, root: Path, context: int = 3) -> str:
    """The unified diff of the installed file and the mutated one (`context` lines)."""
    before = (Path(root) / site.file).read_text(encoding="utf-8").splitlines(keepends=True)
    after = render_file(site, mutated_source, root).splitlines(keepends=True)
    # Only the site's lines differ: diff that window with its context, not the whole file.
    start = max(site.start_line - 1 - context, 0)
    stop = min(site.end_line + context, len(before))
    grown = len(after) - len(before)
    return _unified(
        before[start:stop], after[start : stop + grown], site.file, context, offset=start
    )


def _unified(a: list[str], b: list[str], file: str, n: int, offset: int = 0) -> str:
    """`difflib.unified_diff` of `a` and `b` (lines `offset`+1... of a file), but without the
    junk heuristic difflib applies to sequences of 200+ lines (it makes frequent lines such
    as `bank._touch()` show up as changed when they are not)."""
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(n):
        if not out:
            out += [f"--- a/{file}\n", f"+++ b/{file}\n"]
        first, last = group[0], group[-1]
        old_range = _range(first[1] + offset, last[2] + offset)
        new_range = _range(first[3] + offset, last[4] + offset)
        out.append(f"@@ -{old_range} +{new_range} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            if tag in {"replace", "delete"}:
                out += ["-" + line for line in a[i1:i2]]
            if tag in {"replace", "insert"}:
                out += ["+" + line for line in b[j1:j2]]
    return "".join(out)


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _unchanged(original: str, mutated: str) -> bool:
    if original == mutated:
        return True
    try:
        return _dump(original) == ast.dump(ast.parse(mutated))
    except SyntaxError:
        return False


@functools.lru_cache(maxsize=256)
def _dump(source: str) -> str:
    return ast.dump(ast.parse(source))


class _Offers:
    """What each operator offers at each site for each tool of the target, computed once."""

    def __init__(self, target: Target):
        self.target = target
        self.adapter = target.adapter
        self.root = Path(self.adapter.source_root())
        self.resets = reset_sites(self.adapter)
        self.reset_keys = {site_key(s) for s in self.resets}
        self._sites: dict[str, list[FunctionSite]] = {}
        self._sources: dict[tuple[str, str, int], str] = {}
        self._texts: dict[tuple[str, tuple[str, str, int], str], list[str]] = {}
        self._contexts: dict[tuple[str, tuple[str, str, int]], SiteContext] = {}
        self._volatile: dict[str, frozenset[str]] = {}
        self._written: dict[str, frozenset[str]] = {}
        self._restored: dict[tuple[tuple[str, str, int], str], frozenset[str] | None] = {}

    def sites(self, tool: str) -> list[FunctionSite]:
        if tool not in self._sites:
            self._sites[tool] = tool_sites(self.adapter, tool)
        return self._sites[tool]

    def scored(self, tool: str, operator: Operator) -> list[FunctionSite]:
        """The sites `operator` acts on for `tool`: those its call reaches, plus the reset
        path for reset-leak operators."""
        sites = self.sites(tool)
        if operator.defect_class is not DefectClass.RESET_LEAK:
            return sites
        keys = {site_key(s) for s in sites}
        return [*sites, *(s for s in self.resets if site_key(s) not in keys)]

    def source(self, site: FunctionSite) -> str:
        key = site_key(site)
        if key not in self._sources:
            self._sources[key] = function_source(site, self.root)
        return self._sources[key]

    def context(self, tool: str, site: FunctionSite) -> SiteContext:
        key = (tool, site_key(site))
        if key not in self._contexts:
            contract = self.target.contracts.get(tool)
            self._contexts[key] = site_context(self.adapter, contract, site, tool)
        return self._contexts[key]

    def texts(self, tool: str, site: FunctionSite, operator: Operator) -> list[str]:
        """The mutated text of each occurrence, in occurrence order."""
        key = (tool, site_key(site), operator.name)
        if key not in self._texts:
            source = self.source(site)
            context = self.context(tool, site)
            self._texts[key] = [
                operator.mutate(source, context, occurrence)
                for occurrence in range(operator.occurrences(source, context))
            ]
        return self._texts[key]

    def volatile(self, tool: str) -> frozenset[str]:
        if tool not in self._volatile:
            self._volatile[tool] = volatile_fields(self.adapter, self.target.contracts.get(tool))
        return self._volatile[tool]

    def written(self, tool: str) -> frozenset[str]:
        """W of `tool` (see `written_fields`)."""
        if tool not in self._written:
            self._written[tool] = written_fields(self.adapter, tool, self.volatile(tool))
        return self._written[tool]

    def restored(self, site: FunctionSite, mutated: str) -> frozenset[str] | None:
        """R of a reset-path change: what the statements it removes or changes restore;
        None when that is unknown (the text does not parse, or no field can be named)."""
        key = (site_key(site), mutated)
        if key not in self._restored:
            changed = changed_statements(self.source(site), mutated)
            fields = None if changed is None else restored_fields(self.adapter, site, changed)
            self._restored[key] = fields or None
        return self._restored[key]

    def leaks_into(self, tool: str, site: FunctionSite, operator: Operator, mutated: str) -> bool:
        """Whether a pair (this change, `tool`) can be revealed as far as the reset-path
        rule can tell (see `enumerate_pairs`); True for every other pair."""
        if operator.defect_class is not DefectClass.RESET_LEAK:
            return True
        key = site_key(site)
        if key not in self.reset_keys or any(site_key(s) == key for s in self.sites(tool)):
            return True  # not a reset-path site, or one the tool's own call reaches
        restored = self.restored(site, mutated)
        if restored is None:
            return True
        return bool((restored & self.written(tool)) - self.volatile(tool))

    def canonical_occurrence(
        self, tool: str, site: FunctionSite, operator: Operator, mutated: str, occurrence: int
    ) -> int:
        """The occurrence number under the first tool of the whole target (sorted) that
        offers this exact text, so a mutant's id does not depend on which tools are asked
        for. (Contexts differ per tool, so the same change can have different numbers.)"""
        for other in sorted(self.adapter.tool_names()):
            if other == tool:
                break
            if any(site_key(s) == site_key(site) for s in self.scored(other, operator)):
                texts = self.texts(other, site, operator)
                if mutated in texts:
                    return texts.index(mutated)
        return occurrence


def enumerate_pairs(
    target: Target, tools: Iterable[str], operator_names: Iterable[str]
) -> list[Pair]:
    """For each tool (sorted), each site its call reaches (`tool_sites`; the reset path
    too for reset-leak operators), each operator (in the order given), each occurrence: a
    pair. Occurrences that change nothing (same text or same AST) are skipped.

    A change to a function shared by several tools is one mutant (same id), paired with
    each tool; its occurrence number is the one the first tool of the target offering that
    text gives it (`_Offers.canonical_occurrence`).

    Reset-path rule. A reset-leak change to a reset-path function that the tool's own call
    does not reach is paired with the tool only when the tool's call can leave behind state
    the changed statements restore:
    - R = the fields the statements the change removes or changes restore
      (`restored_fields`): for `self.F = ...`, {F}; for a mutating call
      `self.items.clear()`, {items}; for a call of a target function
      (`self.inventory.reset()`, `self._reset_x()`, resolved as `tool_sites` resolves
      calls), every field a state write of that function, or of anything it reaches,
      writes;
    - W = every field (attribute name or constant key) written by a state write of the
      tool's function or any function it reaches (`written_fields`): the fields along its
      target (`self.accounts[k].balance -= x` writes {accounts, balance}), plus what holds
      the written object (`account.frozen = True` with `account = bank.accounts[k]`, or
      with `account: Account` and `accounts: dict[str, Account]`, also writes {accounts});
    - V = the tool's volatile fields (`volatile_fields`: adapter and contract);
    - pair iff (R & W) - V is not empty. Writes of volatile fields only are not in W: a
      leak of volatile state is masked by every comparison (so removing
      `self.last_activity = ...` pairs with no tool).
    When R is unknown (the mutated text does not parse, or the changed statements name no
    field, e.g. a call outside the target), the change is paired with every tool, as other
    operators' changes are. Which tools are paired never changes a mutant's id.
    """
    adapter = target.adapter
    version = adapter.version()
    operators = [get_operator(name) for name in dict.fromkeys(operator_names)]
    offers = _Offers(target)
    built: dict[tuple[tuple[str, str, int], str, str], Mutant] = {}
    pairs: list[Pair] = []
    for tool in sorted(set(tools)):
        sites = offers.sites(tool)
        ordered = [*sites, *(s for s in offers.resets if s not in sites)]
        for site in ordered:
            source = offers.source(site)
            for operator in operators:
                if site not in offers.scored(tool, operator):
                    continue
                for occurrence, mutated in enumerate(offers.texts(tool, site, operator)):
                    if _unchanged(source, mutated):
                        continue
                    if not offers.leaks_into(tool, site, operator, mutated):
                        continue
                    key = (site_key(site), operator.name, mutated)
                    if key not in built:
                        number = offers.canonical_occurrence(
                            tool, site, operator, mutated, occurrence
                        )
                        built[key] = Mutant(
                            id=mutant_id(version, site, operator.name, number, mutated),
                            arm=operator.arm,
                            operator=operator.name,
                            defect_class=operator.defect_class,
                            target=target.name,
                            target_version=version,
                            site=site,
                            occurrence=number,
                            mutated_source=mutated,
                            diff=unified_diff(site, mutated, offers.root),
                        )
                    pairs.append(Pair(mutant=built[key], tool=tool))
    return pairs

"""Probe values and argument assignments.

Values are harvested from the pre-snapshot (collection keys, scalar leaves, lists that occur
in the state) and from the contract's declared probe values. An assignment is found by a
backtracking search over the arguments in signature order that checks every precondition
as soon as all the arguments it reads are assigned, so the first legal assignment (or the
first one that falsifies exactly one precondition) is found without enumerating the
product of the pools. Everything is deterministic under the seed.
"""

from __future__ import annotations

import enum
import functools
import itertools
import operator
import random
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.contracts.model import (
    OBSERVATION_ROOTS,
    ArgumentSpec,
    Contract,
    ObservationClause,
    PredicateClause,
)
from harness.contracts.predicate import Predicate, PredicateRuntimeError, compile_predicate
from harness.errors import HarnessError
from harness.targets.equality import JSON, canonical_equal, canonical_key

# A string no seed data uses: the natural "does not exist" value for id arguments.
UNKNOWN_ID = "zz-unknown"
MAX_POOL = 32
WHOLE_SHUFFLE = 1024  # harvests up to this size are shuffled whole (see `seeded_order`)
SEARCH_BUDGET = 20_000  # precondition evaluations per search
_ABSENT = object()  # an argument not (yet) assigned


@dataclass(frozen=True)
class CompiledClause:
    clause: PredicateClause
    predicate: Predicate
    id: str = field(init=False)  # the clause's: kept, as a search reads it at every truth

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", self.clause.id)


@dataclass(frozen=True)
class CompiledObservation:
    clause: ObservationClause
    predicate: Predicate
    id: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", self.clause.id)


@dataclass(frozen=True)
class CompiledContract:
    """A contract with every predicate compiled once."""

    contract: Contract
    preconditions: tuple[CompiledClause, ...]
    effects: tuple[CompiledClause, ...]
    invariants: tuple[CompiledClause, ...]
    success: Predicate | None
    volatile: tuple[str, ...]
    observations: tuple[CompiledObservation, ...] = ()

    @property
    def arguments(self) -> list[str]:
        return list(self.contract.signature)


class ClauseCompileError(HarnessError, ValueError):
    def __init__(self, clause_id: str, message: str):
        self.clause_id = clause_id
        super().__init__(f"{clause_id}: {message}")


def compile_contract(contract: Contract, adapter_volatile: Sequence[str] = ()) -> CompiledContract:
    def compiled(clauses: list[PredicateClause]) -> tuple[CompiledClause, ...]:
        out = []
        for clause in clauses:
            try:
                out.append(CompiledClause(clause, compile_predicate(clause.predicate)))
            except ValueError as exc:
                raise ClauseCompileError(clause.id, str(exc)) from exc
        return tuple(out)

    success = None
    if contract.success.predicate:
        try:
            success = compile_predicate(contract.success.predicate)
        except ValueError as exc:
            raise ClauseCompileError("success", str(exc)) from exc
    volatile = tuple(dict.fromkeys([*adapter_volatile, *contract.volatile]))
    observations = []
    for clause in contract.observations:
        try:
            predicate = compile_predicate(clause.predicate, roots=OBSERVATION_ROOTS)
        except ValueError as exc:
            raise ClauseCompileError(clause.id, str(exc)) from exc
        observations.append(CompiledObservation(clause, predicate))
    return CompiledContract(
        contract,
        compiled(contract.preconditions),
        compiled(contract.effects),
        compiled(contract.invariants),
        success,
        volatile,
        tuple(observations),
    )


@dataclass
class Harvest:
    """Values found in a snapshot, each list sorted and without duplicates."""

    keys: list[str] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)
    ints: list[int] = field(default_factory=list)
    floats: list[float] = field(default_factory=list)
    lists: list[list[Any]] = field(default_factory=list)


# Partial harvests of records (dicts two levels down) by identity. A tau2 snapshot shares
# its untouched records with every other snapshot, so each record is walked once per
# process; a record built anew misses and is walked as before. Entries pin their record,
# so an id is never reused while its entry lives.
_Partial = tuple[set[str], set[str], set[int], set[float], dict[str, list[Any]]]
_RECORDS: dict[int, tuple[Any, _Partial]] = {}
_RECORD_ENTRIES = 100_000
# Partial harvests of tables (dicts one level down whose values are all records) by their
# keys: a tau2 snapshot builds each table anew, but one whose records are the very objects
# a table walked before held (every record of a fresh snapshot) has that table's partial,
# merged at once instead of record by record. The few last tables of each set of keys are
# kept, each pinning its records (a changed record makes another table of the same keys).
# Both memos below are bounded by what they hold as well as by their entries: once their
# items (records pinned, values harvested) would pass the bound, they are emptied, so a
# process that checks many tools holds a bounded amount (a pair's child checks one tool;
# a run's own process, a set-up helper, `harness check` and library callers check many).
# A whole harvest pins only partials the table memo keeps: emptying the table memo empties
# both, and a partial pushed out of its keys takes the harvests made from it along. Each
# bound is well above what one check holds (`bench/checker_memos.py`): checking one tau2
# tool holds up to 267,641 items of harvests (airline's `update_reservation_flights`, 10
# harvests) and 157,887 of tables. A single table or harvest bigger than its bound would
# be kept alone, after emptying the memo.
_TABLES: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], _Partial]]] = {}
_TABLE_ENTRIES = 256  # sets of keys
_TABLES_PER_KEYS = 4
_TABLE_ITEMS = 1_000_000
# the items the two memos hold now; how many times the table memo let partials go
_held = {"tables": 0, "harvests": 0, "dropped": 0}


# Whole harvests of states made of tables of records only, by their keys and the partial
# harvests of their tables (`_table`): two snapshots whose tables hold the very same records
# (every fresh tau2 snapshot) have one harvest, sorted once. Entries pin their partials.
_HARVESTS: dict[tuple[Any, ...], tuple[tuple[_Partial, ...], Harvest]] = {}
_HARVEST_ENTRIES = 256
_HARVEST_ITEMS = 1_000_000


def harvest(state: JSON) -> Harvest:
    """Collection keys (keys of dicts whose values are records), scalar leaves, list leaves.
    Read only: one harvest may be given for many states (`_HARVESTS`)."""
    if not _of_tables(state):
        return _harvested(state, None)
    dropped = _held["dropped"]
    tables = tuple(_table(table) for table in state.values())
    if _held["dropped"] != dropped and not all(map(_kept, state.values(), tables)):
        # the table memo let one of these go while the others were found: no entry may
        # pin it, so this harvest is not kept
        return _harvested(state, tables)
    key = (tuple(state), tuple(map(id, tables)))
    hit = _HARVESTS.get(key)
    if hit is None or not all(map(operator.is_, hit[0], tables)):
        found = _harvested(state, tables)
        size = _harvest_size(found)
        if hit is not None:  # a stale entry of the same key: replaced, not added
            _held["harvests"] -= _harvest_size(_HARVESTS.pop(key)[1])
        full = len(_HARVESTS) >= _HARVEST_ENTRIES or _held["harvests"] + size > _HARVEST_ITEMS
        if full:
            _HARVESTS.clear()
            _held["harvests"] = 0
        hit = _HARVESTS[key] = (tables, found)
        _held["harvests"] += size
    return hit[1]


def _kept(table: dict[str, Any], partial: _Partial) -> bool:
    """Whether the table memo keeps `partial`, found for `table`."""
    return any(held is partial for _, held in _TABLES.get(tuple(table), ()))


def _forget_harvests_of(dropped: list[_Partial]) -> None:
    """Drop the whole harvests made from partials the table memo no longer keeps: a harvest
    entry pins its partials, and only those the table memo keeps are counted."""
    gone = set(map(id, dropped))  # `dropped` is alive here, so no id is reused meanwhile
    stale = [k for k, (tables, _) in _HARVESTS.items() if any(id(t) in gone for t in tables)]
    for key in stale:
        _held["harvests"] -= _harvest_size(_HARVESTS.pop(key)[1])


def _harvest_size(found: Harvest) -> int:
    return (
        len(found.keys)
        + len(found.strings)
        + len(found.ints)
        + len(found.floats)
        + len(found.lists)
    )


def _partial_size(partial: _Partial) -> int:
    return sum(map(len, partial))


def _of_tables(state: JSON) -> bool:
    """Whether `state` is a dict of tables of records, nothing else (see `_table`)."""
    return (
        isinstance(state, dict)
        and bool(state)
        and all(isinstance(table, dict) and _is_table(table) for table in state.values())
    )


def _is_table(node: dict[Any, Any]) -> bool:
    return bool(node) and all(isinstance(v, dict) for v in node.values())


def _harvested(state: JSON, tables: tuple[_Partial, ...] | None) -> Harvest:
    """`state`'s harvest, walked whole, or from the partials of its `tables` when it is made
    of tables only (as `_walk` would merge them)."""
    keys: set[str] = set()
    strings: set[str] = set()
    ints: set[int] = set()
    floats: set[float] = set()
    lists: dict[str, list[Any]] = {}
    into = (keys, strings, ints, floats, lists)
    if tables is None:
        _walk(state, into, 0)
    else:  # _walk_dict of a dict of tables: its keys are collection keys, then each table
        keys.update(state)
        for partial in tables:
            _merge(into, partial)
    return Harvest(
        sorted(keys),
        sorted(strings - keys),
        sorted(ints),
        sorted(floats),
        [lists[k] for k in sorted(lists)],
    )


def _merge(into: _Partial, partial: _Partial) -> None:
    """Add `partial` to `into` (written out: a table's walk merges each of its records)."""
    keys, strings, ints, floats, lists = partial
    if keys:
        into[0].update(keys)
    if strings:
        into[1].update(strings)
    if ints:
        into[2].update(ints)
    if floats:
        into[3].update(floats)
    if lists:
        into[4].update(lists)


def _walk(node: JSON, into: _Partial, depth: int) -> None:
    _, strings, ints, floats, lists = into
    if isinstance(node, dict):
        if depth == 1 and _is_table(node):
            _merge(into, _table(node))
            return
        if depth == 2:
            _merge(into, _record(node))
            return
        _walk_dict(node, into, depth)
    elif isinstance(node, list):
        lists.setdefault(repr(node), node)
        for value in node:
            _walk(value, into, depth + 1)
    elif isinstance(node, bool) or node is None:
        return
    elif isinstance(node, str):
        strings.add(node)
    elif isinstance(node, int):
        ints.add(node)
    elif isinstance(node, float):
        floats.add(node)


def _record(node: dict[str, Any]) -> _Partial:
    """The partial harvest of a dict two levels down (`_RECORDS`)."""
    hit = _RECORDS.get(id(node))
    if hit is None or hit[0] is not node:
        partial: _Partial = (set(), set(), set(), set(), {})
        _walk_dict(node, partial, 2)
        if len(_RECORDS) >= _RECORD_ENTRIES:
            _RECORDS.clear()
        hit = _RECORDS[id(node)] = (node, partial)
    return hit[1]


def _table(node: dict[str, Any]) -> _Partial:
    """The partial harvest of a table of records (`_TABLES`): walked as `_walk` walks it
    into an empty partial, unless a table of the same keys held the very same records."""
    keys, records = tuple(node), tuple(node.values())
    for at, (held, partial) in enumerate(_TABLES.get(keys, ())):
        if all(map(operator.is_, held, records)):
            kept = _TABLES[keys]
            kept.insert(0, kept.pop(at))
            return partial
    partial = _union([_record(record) for record in records], keys)
    size = len(records) + _partial_size(partial)
    kept = _TABLES.get(keys, [])
    dropped = kept[_TABLES_PER_KEYS - 1 :]  # what keeping this one pushes out of its keys
    left = _held["tables"] - sum(len(r) + _partial_size(p) for r, p in dropped)
    full = (not kept and len(_TABLES) >= _TABLE_ENTRIES) or left + size > _TABLE_ITEMS
    if full:
        _TABLES.clear()
        _HARVESTS.clear()  # their entries pin partials of the tables dropped here
        _held["tables"] = _held["harvests"] = 0
        _held["dropped"] += 1
        kept = []
    elif dropped:
        del kept[_TABLES_PER_KEYS - 1 :]
        _held["tables"] = left
        _held["dropped"] += 1
        _forget_harvests_of([p for _, p in dropped])
    kept.insert(0, (records, partial))
    _TABLES[keys] = kept
    _held["tables"] += size
    return partial


def _union(parts: list[_Partial], keys: tuple[str, ...]) -> _Partial:
    """What `_walk_dict` merges into an empty partial from a table of these `keys` whose
    records have the partials `parts`, each set joined at once rather than record by
    record."""
    lists: dict[str, list[Any]] = {}
    for part in parts:
        if part[4]:
            lists.update(part[4])
    return (
        set(keys).union(*[part[0] for part in parts]),
        set().union(*[part[1] for part in parts]),
        set().union(*[part[2] for part in parts]),
        set().union(*[part[3] for part in parts]),
        lists,
    )


def _walk_dict(node: dict[str, Any], into: _Partial, depth: int) -> None:
    if _is_table(node):
        into[0].update(node)
    for value in node.values():
        _walk(value, into, depth + 1)


def _dedupe(values: list[JSON]) -> list[JSON]:
    """First occurrences, under canonical equality (linear: keys, not pairwise compares)."""
    seen: set[str] = set()
    out: list[JSON] = []
    for value in values:
        key = canonical_key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def fits(value: JSON, hint: Any) -> bool:
    """Whether a harvested value is well-typed for a parameter annotation: a Literal's or
    an Enum's values, a pydantic model's required fields, list items, union members; an
    annotation this does not know admits everything."""
    return _fitter(hint)(value)


_Fit = Callable[[JSON], bool]


def _typed_in(choices: tuple[Any, ...]) -> _Fit:
    return lambda v: any(v == c and type(v) is type(c) for c in choices)


@functools.lru_cache(maxsize=512)
def _fitter(hint: Any) -> _Fit:
    """`fits` for one annotation, built once (the pools test thousands of values)."""
    if hint is None or hint is Any:
        return lambda v: True
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return _typed_in(typing.get_args(hint))
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(hint)
        # `Model | dict[str, Any]`: the dict is the model's JSON form, so the model decides
        if any(_is_model(m) for m in members):
            members = tuple(m for m in members if not _is_dict(m))
        parts = [_fitter(m) for m in members]
        return lambda v: any(part(v) for part in parts)
    if origin is typing.Annotated:
        return _fitter(typing.get_args(hint)[0])
    if origin is list:
        inner = typing.get_args(hint)
        item = _fitter(inner[0]) if inner else (lambda v: True)
        return lambda v: isinstance(v, list) and all(item(x) for x in v)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _typed_in(tuple(m.value for m in hint))
    if _is_model(hint):
        fields = hint.model_fields
        required = frozenset(n for n, f in fields.items() if f.is_required())
        allowed = frozenset(fields)
        return lambda v: isinstance(v, dict) and required <= v.keys() and v.keys() <= allowed
    if hint in (str, int, float, bool, dict, list):
        if hint is float:
            return lambda v: type(v) in (float, int)
        return lambda v: type(v) is hint
    return lambda v: True


def _is_model(hint: Any) -> bool:
    return isinstance(hint, type) and isinstance(getattr(hint, "model_fields", None), dict)


def _is_dict(hint: Any) -> bool:
    return hint is dict or typing.get_origin(hint) is dict


def candidate_pool(
    name: str, spec: ArgumentSpec, found: Harvest, rng: random.Random, hint: Any = None
) -> list[JSON]:
    """Values to try for one argument: declared first, then harvested (seeded order) and
    kept only when they fit the parameter's annotation (`fits`), then edge values. With
    `pool: declared` only the declared values (and the default, and None when nullable).
    Lists and dicts are fine: nothing here hashes a value."""
    declared = list(spec.probe_values)
    if spec.pool == "declared":
        only = [
            *declared,
            *([spec.default] if spec.optional else []),
            *([None] if spec.nullable else []),
        ]
        return _dedupe(only)
    base = spec.base_type
    harvested: list[JSON]
    edges: list[JSON]
    if base == "str":
        harvested = [*found.keys, *found.strings]
        edges = ["", UNKNOWN_ID]
    elif base == "int":
        near = {v + d for v in found.ints for d in (-1, 1)}
        harvested = sorted(set(found.ints) | near)
        top = max(found.ints, default=0)
        edges = [1, 0, -1, 2 * top + 1]
    elif base == "float":
        harvested = [*found.floats, *(float(v) for v in found.ints)]
        edges = [1.0, 0.0, -1.0]
    elif base == "bool":
        harvested, edges = [], [True, False]
    elif base == "list":
        harvested, edges = list(found.lists), [[]]
    else:  # dict
        harvested, edges = [], [{}]
    kept: Iterable[JSON]
    if len(harvested) <= WHOLE_SHUFFLE:  # as 1.2.0: the same pools where this was cheap
        rng.shuffle(harvested)
        kept = harvested if hint is None else (v for v in harvested if fits(v, hint))
    else:  # the well-typed values only, then drawn lazily (`seeded_order`)
        # harvested str / int / float values fit their own plain type by construction
        plain = hint is None or hint is Any or (hint in (str, int, float) and hint.__name__ == base)
        if plain:
            kept = seeded_order(harvested, rng)
        elif base == "list":  # `harvested` is a copy of found.lists: typed once a harvest
            kept = seeded_order(_fitting_lists(found, hint), rng)
        else:
            kept = seeded_order(_fitting(harvested, hint), rng)
    ill_typed: list[JSON] = []
    if hint is not None:
        # An ill-typed edge ("" for a Literal) goes last: the happy-path search meets every
        # well-typed value first, a precondition can still be falsified with it.
        ill_typed = [v for v in edges if not fits(v, hint)]
        edges = [v for v in edges if fits(v, hint)]
    pool = itertools.chain(
        declared,
        [spec.default] if spec.optional else [],
        edges[:2],
        kept,
        edges[2:],
        [None] if spec.nullable else [],
        ill_typed,
    )
    return _first_unique(pool, max(MAX_POOL, len(declared) + 2))


# fits() of a list or dict value by (annotation, id of the value); entries pin their value.
# tau2 states share untouched records (and their lists) between snapshots, so each is
# typed once per process.
_FITS: dict[tuple[Any, int], tuple[JSON, bool]] = {}
_FITS_ENTRIES = 200_000


def _fitting(values: list[JSON], hint: Any) -> list[JSON]:
    """The values that fit `hint`, in order."""
    fit = _fitter(hint)
    out = []
    for value in values:
        if isinstance(value, list | dict):
            key = (hint, id(value))
            hit = _FITS.get(key)
            if hit is None or hit[0] is not value:
                if len(_FITS) >= _FITS_ENTRIES:
                    _FITS.clear()
                hit = _FITS[key] = (value, fit(value))
            if hit[1]:
                out.append(value)
        elif fit(value):
            out.append(value)
    return out


# _fitting of a harvest's lists by (annotation, id of the harvest's list of lists): one
# harvest serves many states (`harvest`), and each pool of a list argument typed them all.
# Entries pin the list they typed.
_LIST_FITS: dict[tuple[Any, int], tuple[list[Any], list[JSON]]] = {}
_LIST_FITS_ENTRIES = 1024


def _fitting_lists(found: Harvest, hint: Any) -> list[JSON]:
    """`_fitting(found.lists, hint)`, read only."""
    key = (hint, id(found.lists))
    hit = _LIST_FITS.get(key)
    if hit is None or hit[0] is not found.lists:
        if len(_LIST_FITS) >= _LIST_FITS_ENTRIES:
            _LIST_FITS.clear()
        hit = _LIST_FITS[key] = (found.lists, _fitting(found.lists, hint))
    return hit[1]


def seeded_order(values: list[JSON], rng: random.Random) -> Iterator[JSON]:
    """`values` in a seeded random order, drawn lazily: a Fisher-Yates shuffle whose swaps
    live in a dict, so taking k values costs O(k) however long the list (the pools stop at
    MAX_POOL; shuffling whole harvests of thousands of values was most of a tau2 check).
    Harvests up to WHOLE_SHUFFLE values are still shuffled whole as 1.2.0 did
    (`candidate_pool`), so the comparison with 1.2.0 isolates the recorded probes wherever
    shuffling was cheap."""
    n = len(values)
    swapped: dict[int, int] = {}
    for i in range(n):
        j = rng.randrange(i, n)
        at_j = swapped.get(j, j)
        swapped[j] = swapped.get(i, i)
        swapped.pop(i, None)
        yield values[at_j]


def _first_unique(values: Iterable[JSON], limit: int) -> list[JSON]:
    """`_dedupe(list(values))[:limit]`, reading no further than needed."""
    seen: set[str] = set()
    out: list[JSON] = []
    for value in values:
        key = canonical_key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
            if len(out) == limit:
                break
    return out


def argument_pools(
    compiled: CompiledContract,
    state: JSON,
    seed: int,
    tool: str,
    found: Harvest | None = None,
    hints: Mapping[str, Any] | None = None,
) -> dict[str, list[JSON]]:
    """Every argument's candidate pool; `found`: `harvest(state)`, when already known;
    `hints`: the tool's parameter annotations."""
    found = harvest(state) if found is None else found
    hints = hints or {}
    return {
        name: candidate_pool(
            name, spec, found, random.Random(f"{seed}:{tool}:{name}"), hints.get(name)
        )
        for name, spec in compiled.contract.signature.items()
    }


class AssignmentSearch:
    """Backtracking search for an assignment with a wanted truth value per precondition."""

    def __init__(
        self,
        compiled: CompiledContract,
        pools: Mapping[str, list[JSON]],
        state: JSON,
        budget: int = SEARCH_BUDGET,
    ):
        self.compiled = compiled
        self.pools = pools
        self.state = state
        self.budget = budget
        self.order = compiled.arguments
        # A precondition is checked at the depth where its last argument gets assigned.
        self._due: dict[int, list[CompiledClause]] = {}
        for clause in compiled.preconditions:
            reads = [self.order.index(a) for a in clause.predicate.args_read if a in self.order]
            self._due.setdefault(max(reads, default=-1), []).append(clause)
        self.errors: dict[str, PredicateRuntimeError] = {}
        # Truths by clause and the argument values it reads: a str as it is, anything else
        # by its repr (`_shown`; a repr tells JSON values apart by type and key order).
        # Valid while no tool runs: see `forget`.
        self._truths: dict[tuple[Any, ...], bool | None] = {}
        # id -> (value, (repr,)) while `find` runs (`_shown`), else None
        self._reprs: dict[int, tuple[Any, tuple[str]]] | None = None

    def truth(self, clause: CompiledClause, args: Mapping[str, JSON]) -> bool | None:
        """The precondition's truth on `args`, or None when it cannot be evaluated. A
        predicate is a pure function of (pre, args): each is evaluated once per value set."""
        names = clause.predicate.args_depended_on
        if names is None:
            names, values = tuple(args), tuple(args.values())
        else:
            values = tuple([args.get(name, _ABSENT) for name in names])
        shown = self._shown
        key = (clause.id, names, tuple([v if type(v) is str else shown(v) for v in values]))
        found = self._truths.get(key, _ABSENT)
        if found is _ABSENT:
            found = self._truths[key] = self._evaluate(clause, args)
        return found

    def _shown(self, value: Any) -> tuple[str]:
        """A value's repr in a truth's key, as a 1-tuple so that no str value equals it.
        While `find` searches, memoised by identity (a pool's lists are written out once a
        search, not at every truth; entries pin their values): nothing changes a value
        while a search runs, but a tool may change a list it was passed between two."""
        if self._reprs is None:
            return (repr(value),)
        held = self._reprs.get(id(value))
        if held is None or held[0] is not value:
            held = self._reprs[id(value)] = (value, (repr(value),))
        return held[1]

    def forget(self) -> None:
        """Drop the memoised truths: a tool may change in place a value it was passed, and
        pool values are parts of the state this search reads."""
        self._truths.clear()

    def _evaluate(self, clause: CompiledClause, args: Mapping[str, JSON]) -> bool | None:
        try:
            return clause.predicate.holds({"pre": self.state, "args": dict(args)})
        except PredicateRuntimeError as exc:
            self.errors.setdefault(clause.id, exc)
            return None

    def truths(self, args: Mapping[str, JSON]) -> dict[str, bool | None]:
        return {c.id: self.truth(c, args) for c in self.compiled.preconditions}

    def is_legal(self, args: Mapping[str, JSON]) -> bool:
        return all(v is True for v in self.truths(args).values())

    def find(
        self,
        falsify: str | None = None,
        prefer: Mapping[str, JSON] | None = None,
    ) -> dict[str, JSON] | None:
        """The first assignment (pools in order, `prefer`'s values first) whose preconditions
        are all true, except `falsify`, which must be false."""
        spent = 0

        orders: dict[str, list[JSON]] = {}  # built once: backtracking revisits each depth

        def ordered(name: str) -> list[JSON]:
            if name not in orders:
                pool = self.pools[name]
                if prefer is not None and name in prefer:
                    rest = [v for v in pool if not canonical_equal(v, prefer[name])]
                    orders[name] = [prefer[name], *rest]
                else:
                    orders[name] = pool
            return orders[name]

        due, truth = self._due, self.truth

        def consistent(depth: int, args: dict[str, JSON]) -> bool:
            nonlocal spent
            for clause in due.get(depth, ()):
                spent += 1
                if truth(clause, args) is not (clause.id != falsify):  # true but `falsify`
                    return False
            return True

        def extend(depth: int, args: dict[str, JSON]) -> dict[str, JSON] | None:
            if depth == len(self.order):
                return dict(args)
            name = self.order[depth]
            for value in ordered(name):
                if spent >= self.budget:
                    return None
                args[name] = value
                if consistent(depth, args):
                    found = extend(depth + 1, args)
                    if found is not None:
                        return found
                del args[name]
            return None

        self._reprs = {}
        try:
            if not consistent(-1, {}):
                return None
            return extend(0, {})
        finally:
            self._reprs = None


def falsy(value: JSON) -> bool:
    """A meaningful falsy value (0, "", [], {}, False); None means absent, not falsy."""
    return value is not None and not value

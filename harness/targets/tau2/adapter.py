"""The adapter of the tau2-bench target: one domain of the `inspect_evals.tau2` port.

- Tools: the public methods of the domain's tool classes (`AirlineAgentTools`,
  `RetailAgentTools`, `TelecomAgentTools` and `TelecomUserTools`) that the port exposes to
  an agent or a user as an `inspect_ai` tool (the `@tool` functions of `tools.py` /
  `user_tools.py` of the same name). A tool is a method: the instance is injected as `self`,
  and the class attribute is looked up at every call, so a mutant that rebinds it is seen.
- Fresh environment: the domain's database is loaded once per process. Airline and retail
  databases are whole pydantic models of 2-3 MB of JSON (a deep copy costs 0.4 s, a dump
  0.1-0.2 s): a fresh environment shares the pristine records and copies a record on first
  read (`CopyOnReadDict`), so a probe copies and dumps only the records its call touched,
  and the untouched records of two snapshots are the same objects (equality skips them by
  identity). A record whose fields are immutable values and tables of records (an airline
  flight's statuses by date, a retail product's variants) is copied as a shell: the same
  values, and each such table again copied on read, so reading a flight for its status on
  one date copies that date's status, not all of them. Telecom's databases are small and
  copied whole, unpickled from a pickle of the pristine database made once per process (a
  third of a deep copy's time).
- Snapshot: the database's `model_dump(mode="json")`; telecom's is
  `{"agent": ..., "user": ...}`. Results that are JSON text (most tools return
  `model_dump_json()`) are parsed, so predicates read `result.status`, not a string.
- Determinism: airline and retail ids and clocks are fixed in the port itself
  (`_get_new_reservation_id`, `_get_datetime`); telecom's bill ids come from `uuid.uuid4`,
  replaced while a call runs by a counter owned by the environment (two identical calls on
  two fresh environments compare equal). Telecom syncs the device with the line after every
  call (`Environment.sync_tools`), as the port's solver does after each action.
- Store reads: the tool classes' fields are read through one pydantic adapter per field
  type in this process, not a new adapter per read, and their names are found on the class
  without pydantic's deprecated-access descriptor (`store_reads.py`).
- Invoke: a raised exception (the port's `ToolError`, a pydantic `ValidationError` of a
  malformed argument) is `InvokeOutcome(success=False)`.
- Reset: the port has no reset path (`ResetUnsupported`).
"""

from __future__ import annotations

import copy
import importlib
import importlib.metadata
import importlib.util
import json
import pickle
import typing
import uuid
from collections.abc import Callable, ItemsView, Iterator, ValuesView
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from harness.targets.adapter import InvokeOutcome, ReferenceCall, ResetUnsupported
from harness.targets.equality import JSON
from harness.targets.tau2.store_reads import adapters_reused, reads_made_direct
from harness.targets.tau2.sync import telecom_sync

CONTRACTS_ROOT = Path(__file__).resolve().parent / "contracts"
PACKAGE = "inspect_evals.tau2"


@dataclass(frozen=True)
class Role:
    """One tool class of a domain: its module, class, the module of its `@tool` wrappers and
    the snapshot key it lives under (None: the snapshot is its database itself)."""

    module: str
    cls: str
    wrappers: str
    key: str | None


DOMAINS: dict[str, tuple[Role, ...]] = {
    "airline": (
        Role(
            f"{PACKAGE}.airline.AirlineAgentTools",
            "AirlineAgentTools",
            f"{PACKAGE}.airline.tools",
            None,
        ),
    ),
    "retail": (
        Role(
            f"{PACKAGE}.retail.RetailAgentTools",
            "RetailAgentTools",
            f"{PACKAGE}.retail.tools",
            None,
        ),
    ),
    "telecom": (
        Role(
            f"{PACKAGE}.telecom.TelecomAgentTools",
            "TelecomAgentTools",
            f"{PACKAGE}.telecom.tools",
            "agent",
        ),
        Role(
            f"{PACKAGE}.telecom.TelecomUserTools",
            "TelecomUserTools",
            f"{PACKAGE}.telecom.user_tools",
            "user",
        ),
    ),
}
# The policy file the agent's system prompt carries, per domain (relative to the source root).
POLICY_FILES = {
    "airline": "inspect_evals/tau2/data/domains/airline/policy.txt",
    "retail": "inspect_evals/tau2/data/domains/retail/policy.txt",
    "telecom": "inspect_evals/tau2/data/domains/telecom/main_policy.txt",
}


class CopyOnReadDict(dict):  # type: ignore[type-arg]
    """A table of records shared with the pristine database until read: the first read of a
    record (item access, `get`, `pop`, `setdefault`, a loop over `values()` or `items()`
    reaching it: `_OwningItems`) replaces it by a copy (unpickled from the record's pickle,
    made once per process: 8x faster than a deep copy), so the pristine records are never
    changed. A record named in `nested` is copied as a shell instead (`_shell`): its field
    values shared, each named table of records in it a `CopyOnReadDict` of its own.
    `owned` names the keys whose value may differ from the pristine one (read, written or
    added); `pristine` is the table they came from. The C-level reads of pydantic's
    serialiser and of `==` see the same values."""

    __slots__ = ("blobs", "nested", "owned", "pristine")

    def __init__(
        self,
        pristine: dict[str, Any],
        blobs: dict[str, bytes] | None = None,
        nested: dict[str, _Nested] | None = None,
    ):
        super().__init__(pristine)
        self.pristine = pristine
        self.blobs = blobs or {}
        self.nested = nested or {}
        self.owned: set[str] = set()

    def _own(self, key: Any) -> None:
        if key not in self.owned and dict.__contains__(self, key):
            value = dict.__getitem__(self, key)
            tables = self.nested.get(key)
            if tables is not None:
                copied = _shell(value, tables)
            else:
                blob = self.blobs.get(key)
                copied = pickle.loads(blob) if blob is not None else copy.deepcopy(value)
            dict.__setitem__(self, key, copied)
            self.owned.add(key)

    def __getitem__(self, key: Any) -> Any:
        self._own(key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._own(key)
        return dict.get(self, key, default)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.owned.add(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        self.owned.add(key)
        dict.__delitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        self._own(key)
        self.owned.add(key)
        return dict.pop(self, key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._own(key)
        self.owned.add(key)
        return dict.setdefault(self, key, default)

    def _own_all(self) -> None:
        for key in list(dict.keys(self)):
            self._own(key)

    def values(self) -> Any:
        return _OwningValues(self)

    def items(self) -> Any:
        return _OwningItems(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        # A plain dict: a copy of the database (a mutant may make one) owns every record.
        return {
            k: pickle.loads(self.blobs[k])
            if k not in self.owned and k in self.blobs
            else copy.deepcopy(v, memo)
            for k, v in dict.items(self)
        }


# A record's tables of records, copied on read inside its shell: field -> entry key -> pickle.
_Nested = dict[str, dict[str, bytes]]
_IMMUTABLE = (str, int, float, bool, type(None))


def _shell(record: Any, tables: _Nested) -> Any:
    """A copy of a pristine `record` (`copy.copy`: a pydantic model's own shallow copy) whose
    tables of records (`tables` names them) are each a `CopyOnReadDict` of the pristine
    record's table: the rest of its fields are immutable values (`_nested_tables`), shared
    as they are. A deep copy of the shell copies every entry (`CopyOnReadDict.__deepcopy__`)."""
    shell = copy.copy(record)
    for name, blobs in tables.items():
        shell.__dict__[name] = CopyOnReadDict(record.__dict__[name], blobs)
    return shell


def _nested_tables(record: Any) -> _Nested | None:
    """Pickles of the entries of each table of records in a pydantic `record` (a dict field
    whose keys are str and whose values are pydantic models), when its other fields are all
    immutable values (str, int, float, bool, None) and it has no extra or private values;
    None otherwise (the record is then copied whole when read)."""
    from pydantic import BaseModel

    if not isinstance(record, BaseModel) or record.__pydantic_extra__:
        return None
    if getattr(record, "__pydantic_private__", None):
        return None
    tables: _Nested = {}
    for name, value in record.__dict__.items():
        if type(value) in _IMMUTABLE:
            continue
        if type(value) is not dict or not value:
            return None
        if not all(type(k) is str and isinstance(v, BaseModel) for k, v in value.items()):
            return None
        tables[name] = {
            k: pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL) for k, v in value.items()
        }
    return tables or None


class _Whole:
    """What `_OwningItems` and `_OwningValues` do as `dict`'s own views did: every record
    owned, then the table's plain view (`_plain`) asked."""

    __slots__ = ()
    _mapping: CopyOnReadDict
    _plain: Any  # dict.items or dict.values

    def _whole(self) -> Any:
        self._mapping._own_all()
        return self._plain(self._mapping)

    def __reversed__(self) -> Any:
        return reversed(self._whole())

    @property
    def mapping(self) -> Any:
        return self._whole().mapping

    def __repr__(self) -> str:
        return repr(self._whole())


class _OwningItems(_Whole, ItemsView):  # type: ignore[type-arg]
    """`CopyOnReadDict.items()`: a live view whose loop reads each record through the
    table's `__getitem__`, so a record is copied when the loop reaches it, not before. A
    loop that stops early (the port's `find_user_id_by_name_zip` returns at its first
    match) leaves the records after it shared and unread; `in` reads the one record it
    asks about. What a loop, `len` and `in` see is what `dict.items()` shows: the same pairs
    in the same order, the same `RuntimeError` when the table changes size during a loop
    (the table's own key iterator raises it), anything but a pair not in it. Everything
    else (comparisons, set operations, `reversed`, `mapping`, `repr`) is done as before:
    every record owned, then `dict.items()` of the table."""

    __slots__ = ()
    _plain = staticmethod(dict.items)

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        return super().__contains__(item)

    def __eq__(self, other: object) -> bool:
        return self._whole() == other

    def __ne__(self, other: object) -> bool:
        return self._whole() != other

    def __lt__(self, other: Any) -> bool:
        return self._whole() < other

    def __le__(self, other: Any) -> bool:
        return self._whole() <= other

    def __gt__(self, other: Any) -> bool:
        return self._whole() > other

    def __ge__(self, other: Any) -> bool:
        return self._whole() >= other

    __hash__ = None  # type: ignore[assignment]

    def __and__(self, other: Any) -> Any:
        return self._whole() & other

    def __rand__(self, other: Any) -> Any:
        return other & self._whole()

    def __or__(self, other: Any) -> Any:
        return self._whole() | other

    def __ror__(self, other: Any) -> Any:
        return other | self._whole()

    def __sub__(self, other: Any) -> Any:
        return self._whole() - other

    def __rsub__(self, other: Any) -> Any:
        return other - self._whole()

    def __xor__(self, other: Any) -> Any:
        return self._whole() ^ other

    def __rxor__(self, other: Any) -> Any:
        return other ^ self._whole()

    def isdisjoint(self, other: Any) -> bool:
        return self._whole().isdisjoint(other)


class _OwningValues(_Whole, ValuesView):  # type: ignore[type-arg]
    """`CopyOnReadDict.values()`: as `_OwningItems`, the values alone: a loop copies each
    record as it reaches it (`in` is a loop); `reversed`, `mapping` and `repr` as before."""

    __slots__ = ()
    _plain = staticmethod(dict.values)


class _CountingUuid:
    """Stands in for the `uuid` module inside a telecom tool module while a call runs:
    `uuid4()` draws from the environment's counter, everything else is the real module."""

    def __init__(self) -> None:
        self.env: Tau2Environment | None = None

    def uuid4(self) -> uuid.UUID:
        assert self.env is not None
        self.env.uuid_counter += 1
        return uuid.UUID(int=self.env.uuid_counter)

    def __getattr__(self, name: str) -> Any:
        return getattr(uuid, name)


@dataclass
class Tau2Environment:
    """One environment: a tool-class instance per role, and telecom's uuid counter."""

    instances: dict[str, Any]  # snapshot key ("" for a single role) -> tool-class instance
    uuid_counter: int = 0
    sync: Callable[[Tau2Environment], None] | None = field(default=None, repr=False)


@dataclass
class _Domain:
    """One loaded domain: classes per role, tools (name -> role key), the pristine
    databases and their records' JSON (shared by every snapshot of an untouched record)."""

    classes: dict[str, type]
    tools: dict[str, str]
    pristine: dict[str, Any]
    pristine_json: dict[str, dict[str, Any]]
    blobs: dict[str, dict[str, dict[str, bytes]]]  # role -> table -> record key -> pickle
    nested: dict[str, dict[str, dict[str, _Nested]]]  # role -> table -> record key -> shell's
    whole: dict[str, bytes]  # role -> pickle of its pristine database (copied whole)


def _role_key(role: Role) -> str:
    return role.key or ""


@cache
def _load(domain: str) -> _Domain:
    """Import the port's tool classes of `domain` and load their databases: once per process."""
    from inspect_ai.util._store import Store

    adapters_reused()  # before any read of a store field (store_reads.py)
    reads_made_direct()

    classes: dict[str, type] = {}
    tools: dict[str, str] = {}
    pristine: dict[str, Any] = {}
    for role in DOMAINS[domain]:
        cls = getattr(importlib.import_module(role.module), role.cls)
        wrappers = importlib.import_module(role.wrappers)
        key = _role_key(role)
        classes[key] = cls
        instance = cls(store=Store(), instance=f"harness-{domain}-{key}")
        instance.initialize()
        pristine[key] = instance.db
        for name in dir(wrappers):
            if name.startswith("_") or name in tools:
                continue
            if callable(getattr(wrappers, name)) and callable(vars(cls).get(name)):
                tools[name] = key
    if domain == "telecom":
        # The port's own environment syncs the device with the line once when it is built.
        env = Tau2Environment(
            {k: _instance(classes[k], copy.deepcopy(db)) for k, db in pristine.items()}
        )
        telecom_sync(env)
        pristine = {k: inst.db for k, inst in env.instances.items()}
    pristine_json = {
        key: {name: _dump(value) for name, value in db if isinstance(value, dict)}
        for key, db in pristine.items()
    }
    blobs = {
        key: {
            name: {k: pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL) for k, v in table.items()}
            for name, table in db
            if isinstance(table, dict) and domain != "telecom"
        }
        for key, db in pristine.items()
    }
    nested = {
        key: {name: _nested_records(table) for name, table in db if name in blobs[key]}
        for key, db in pristine.items()
    }
    whole = {
        key: pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL)
        for key, db in pristine.items()
        if not _copied_on_read(domain, pristine_json[key])
    }
    return _Domain(classes, tools, pristine, pristine_json, blobs, nested, whole)


def _nested_records(table: dict[str, Any]) -> dict[str, _Nested]:
    """The records of a table copied as shells when read (`_nested_tables`), by key."""
    out = {}
    for k, record in table.items():
        tables = _nested_tables(record)
        if tables is not None:
            out[k] = tables
    return out


def _copied_on_read(domain: str, tables: dict[str, Any]) -> bool:
    """Whether a fresh environment shares a database's records until read
    (`CopyOnReadDict`), rather than copying the database whole."""
    return bool(tables) and domain != "telecom"


def _dump(table: dict[str, Any]) -> dict[str, Any]:
    return {name: record.model_dump(mode="json") for name, record in table.items()}


def _instance(cls: type, db: Any) -> Any:
    from inspect_ai.util._store import Store

    return cls(store=Store(), instance="harness", db=db, initialized=True)


def tau2_version() -> str:
    return (
        f"inspect-evals {importlib.metadata.version('inspect-evals')} "
        f"inspect-ai {importlib.metadata.version('inspect-ai')}"
    )


class Tau2Adapter:
    """Builds, snapshots and invokes one tau2 domain (implements `Adapter`)."""

    def __init__(self, domain: str):
        if domain not in DOMAINS:
            raise ValueError(f"unknown tau2 domain {domain!r}; use one of {', '.join(DOMAINS)}")
        self.domain = domain
        self.name = f"tau2-{domain}"
        self._uuid = _CountingUuid()

    @property
    def _data(self) -> _Domain:
        return _load(self.domain)

    def _role(self, tool: str) -> str:
        try:
            return self._data.tools[tool]
        except KeyError:
            raise KeyError(
                f"unknown tool {tool!r} of target {self.name!r}; known tools: "
                + ", ".join(sorted(self._data.tools))
            ) from None

    # --- the protocol ----------------------------------------------------------------------

    def version(self) -> str:
        return f"{tau2_version()} {self.domain}"

    def tool_names(self) -> list[str]:
        return sorted(self._data.tools)

    def fresh(self) -> Tau2Environment:
        data = self._data
        instances = {}
        for key, db in data.pristine.items():
            if _copied_on_read(self.domain, data.pristine_json[key]):
                tables = {
                    name: CopyOnReadDict(
                        value, data.blobs[key].get(name), data.nested[key].get(name)
                    )
                    for name, value in db
                }
                copied = type(db).model_construct(**tables)
            else:
                copied = pickle.loads(data.whole[key])
            instances[key] = _instance(data.classes[key], copied)
        return Tau2Environment(instances)

    def snapshot(self, env: Tau2Environment) -> JSON:
        out = {}
        for key, instance in env.instances.items():
            out[key] = self._snapshot_db(key, instance.db)
        return out.get("", out)

    def _snapshot_db(self, key: str, db: Any) -> dict[str, Any]:
        shared = self._data.pristine_json[key]
        state: dict[str, Any] = {}
        for name, value in db:
            if isinstance(value, CopyOnReadDict):
                state[name] = _table_json(value, shared[name])
            else:
                state[name] = _to_json(value)
        return state

    def invoke(self, env: Tau2Environment, tool: str, args: dict[str, JSON]) -> InvokeOutcome:
        key = self._role(tool)
        instance = env.instances[key]
        method = getattr(type(instance), tool)  # the class attribute now: mutants rebind it
        self._uuid.env = env
        modules = self._uuid_modules()
        saved = [(m, m.__dict__.get("uuid")) for m in modules]
        for module, _ in saved:
            module.uuid = self._uuid
        try:
            result = method(instance, **copy.deepcopy(args))
            if self.domain == "telecom":
                telecom_sync(env)
        except Exception as exc:  # the tool's refusal or a malformed argument; never propagate
            return InvokeOutcome(
                success=False, error_type=type(exc).__name__, error_message=str(exc)
            )
        finally:
            for module, original in saved:
                module.uuid = original
            self._uuid.env = None
        return InvokeOutcome(success=True, result=_to_json(result))

    def _uuid_modules(self) -> list[Any]:
        modules = []
        for role in DOMAINS[self.domain]:
            module = importlib.import_module(role.module)
            if module.__dict__.get("uuid") is uuid or isinstance(
                module.__dict__.get("uuid"), _CountingUuid
            ):
                modules.append(module)
        return modules

    def reset(self, env: Tau2Environment) -> None:
        raise ResetUnsupported("tau2 environments have no reset path")

    def tool_function(self, tool: str) -> Callable[..., Any]:
        cls = self._data.classes[self._role(tool)]
        return vars(cls)[tool]

    def injected_parameters(self, tool: str) -> frozenset[str]:
        return frozenset({"self"})

    def source_root(self) -> Path:
        spec = importlib.util.find_spec("inspect_evals")
        if spec is None or spec.origin is None:
            raise ModuleNotFoundError("inspect_evals is not installed")
        return Path(spec.origin).resolve().parent.parent

    def contracts_dir(self) -> Path:
        return CONTRACTS_ROOT / self.domain

    def volatile_paths(self) -> list[str]:
        return []

    def policy_file(self) -> str:
        return POLICY_FILES[self.domain]

    def argument_hints(self, tool: str) -> dict[str, Any]:
        """The tool's parameter annotations (for annotation-aware probe values)."""
        return {
            name: hint
            for name, hint in typing.get_type_hints(self.tool_function(tool)).items()
            if name not in ("self", "return")
        }

    # --- the grader arm (GraderAdapter) ------------------------------------------------------

    def grader_tasks(self, tool: str) -> list[str]:
        from harness.targets.tau2.grader import grader_tasks

        return grader_tasks(self, tool)

    def grade(self, task: str) -> bool:
        from harness.targets.tau2.grader import grade

        return grade(self, task)

    # --- the tasks (TaskAdapter) -------------------------------------------------------------

    def task_ids(self) -> list[str]:
        from harness.targets.tau2.grader import tasks

        return sorted(tasks(self.domain))

    def task_environment(self, task: str) -> Tau2Environment:
        """A fresh environment after the task's initialisation actions."""
        from harness.targets.tau2.grader import initialized

        return initialized(self, self._task(task))

    def copy_environment(self, env: Tau2Environment) -> Tau2Environment | None:
        """A copy of `env` as it is, for the checker's recorded pre-states: telecom's
        databases are small (a deep copy takes about 1 ms, a task's initialization 15 ms);
        airline's and retail's are large and copied on read, so rebuilding them is cheaper
        (None)."""
        return copy.deepcopy(env) if self.domain == "telecom" else None

    def reference_calls(self, task: str) -> list[ReferenceCall]:
        """The task's gold actions in order (those naming a tool of this target)."""
        from harness.targets.tau2.grader import gold_actions

        tools = self._data.tools
        return [ReferenceCall(n, a) for n, a in gold_actions(self._task(task)) if n in tools]

    def _task(self, task: str) -> Any:
        from harness.targets.tau2.grader import tasks

        found = tasks(self.domain)
        if task not in found:
            raise KeyError(f"unknown task {task!r} of {self.name}")
        return found[task]


def _table_json(table: CopyOnReadDict, records: dict[str, Any]) -> dict[str, Any]:
    """A table's JSON: each record's pristine JSON (`records`, shared by every snapshot)
    unless the record was read and differs from the pristine one, then its dump."""
    if list(dict.keys(table)) == list(records):  # the pristine keys, in their order
        out = dict(records)
        for key in table.owned:  # the records read, written or added
            if dict.__contains__(table, key):  # not one added and deleted again
                record = dict.__getitem__(table, key)
                if record != table.pristine.get(key):
                    out[key] = record.model_dump(mode="json")
        return out
    out = {}
    for key in dict.keys(table):
        record = dict.__getitem__(table, key)
        if key not in table.owned or (key in records and record == table.pristine.get(key)):
            out[key] = records[key]  # unchanged: shared JSON
        else:
            out[key] = record.model_dump(mode="json")
    return out


def _to_json(value: Any) -> JSON:
    """A tool result or state value as JSON: JSON text parsed, pydantic models dumped."""
    from pydantic import BaseModel

    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return value
        return value
    if value is None or type(value) in (bool, int, float):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_json(v) for v in value]
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)


def iter_tables(db: Any) -> Iterator[tuple[str, Any]]:
    yield from db


class Tau2AirlineAdapter(Tau2Adapter):
    def __init__(self) -> None:
        super().__init__("airline")


class Tau2RetailAdapter(Tau2Adapter):
    def __init__(self) -> None:
        super().__init__("retail")


class Tau2TelecomAdapter(Tau2Adapter):
    def __init__(self) -> None:
        super().__init__("telecom")

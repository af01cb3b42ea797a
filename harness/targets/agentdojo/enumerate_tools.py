"""Which AgentDojo tools change the environment, and which snapshot paths are clock-dependent:
found by probing, not by reading the code.

    python -m harness.targets.agentdojo.enumerate_tools [--suite S ...] [--budget N]
        [--output PATH | --no-write]

For every tool of every suite, argument values are harvested from a fresh environment's
snapshot (ids, names, emails, dates, file names ..., ranked by how well the path they sit at
matches the parameter's name) and the tool is called with up to `--budget` argument choices,
each on its own fresh environment. A tool changes state when some successful call leaves a
(volatile-masked) snapshot that differs from the fresh one.

Clock-dependent paths: every successful call of the sample is made again on two further fresh
environments and the two (unmasked) snapshots are compared; a path that differs between two
identical calls depends on the wall clock. The same is done for two-step sequences that start
with a call that stamped the clock (so a stamp that travels, e.g. into the trash, is found).
Paths are generalised over collection keys and list positions (`inbox.emails.*.timestamp`).

Writes `STATE_CHANGING_TOOLS.md` next to this file and exits 1 when a clock-dependent path
found here is not covered by the adapter's `volatile_paths()`.
"""

from __future__ import annotations

import argparse
import enum
import inspect
import itertools
import json
import random
import re
import sys
import time
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.targets.agentdojo.adapter import SUITES, AgentDojoAdapter
from harness.targets.equality import JSON, diff, mask_state, parse_pattern

OUTPUT = Path(__file__).resolve().parent / "STATE_CHANGING_TOOLS.md"
# Observed by hand, not by this probe (it runs in one process): kept in the output so that
# nobody mistakes "stable within a process" for "stable across processes".
NOTES = {
    "travel": "`Calendar.create_event` stores `list(set(participants))`: the order of "
    "`calendar.events.*.participants` of a created event depends on PYTHONHASHSEED. It is "
    "stable within one process (and its forked workers), so it is not masked, but it differs "
    "between processes (seen with PYTHONHASHSEED=1, 2, 3).",
}
NOTES["workspace"] = NOTES["travel"]
DEFAULT_BUDGET = 200
SEQUENCE_BUDGET = 8  # second-step calls per (clock-stamping call, tool) pair
RECHECKS_PER_TOOL = 6  # successful calls per tool repeated on two fresh environments
POOL = {"str": 10, "int": 10, "float": 6, "list": 6}
PROBE_TEXT = "harness probe"
_ISO = re.compile(r"\A(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}))?")
_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")

Path_ = tuple[str | int, ...]


# --- harvesting ------------------------------------------------------------------------------


def _tokens(name: str) -> set[str]:
    """Word tokens of a field or parameter name, singular (`hotel_names` -> {hotel, name})."""
    out = set()
    for token in _TOKEN_SPLIT.split(name.lower()):
        if not token:
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        out.add(token)
    return out


def _fields(model: Any) -> list[str]:
    """A pydantic model's field names, computed fields included (as the snapshot has them)."""
    cls = type(model)
    return [*cls.model_fields, *cls.model_computed_fields]


@dataclass
class Harvest:
    """Values found in an environment, each with the field-name tokens of the path it sits at
    and the name of the field that holds it (dict keys are data, never part of a path)."""

    scored: list[tuple[frozenset[str], str, JSON]] = field(default_factory=list)  # tokens, leaf

    def add(self, tokens: Iterable[str], leaf: str, value: JSON) -> None:
        self.scored.append((frozenset(tokens), leaf, value))


def harvest(env: Any) -> Harvest:
    """Every scalar, every dict key and every list of strings of the environment."""
    from pydantic import BaseModel
    from pydantic_core import to_jsonable_python

    found = Harvest()

    def walk(node: Any, tokens: frozenset[str], leaf: str) -> None:
        if isinstance(node, BaseModel):
            for name in _fields(node):
                walk(getattr(node, name), tokens | _tokens(name), name)
        elif isinstance(node, dict):
            for key, value in node.items():
                found.add(tokens, leaf, str(key))
                walk(value, tokens, leaf)
        elif isinstance(node, list | tuple | set):
            items = list(node)
            if items and all(isinstance(v, str) for v in items):
                found.add(tokens, leaf, [str(v) for v in items])
            for value in items:
                walk(value, tokens, leaf)
        elif node is not None:
            found.add(tokens, leaf, to_jsonable_python(node))

    walk(env, frozenset(), "")
    return found


def _date_forms(value: str) -> list[str]:
    """ISO date and "YYYY-MM-DD HH:MM" forms of an ISO datetime string."""
    match = _ISO.match(value)
    if not match:
        return []
    forms = [match.group(1)]
    if match.group(2):
        forms.append(f"{match.group(1)} {match.group(2)}")
    return forms


# --- argument pools ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    name: str
    base: str  # str int float bool list_str list_any dict enum other
    nullable: bool
    optional: bool
    default: Any
    choices: tuple[Any, ...] = ()


def _param(name: str, annotation: Any, default: Any) -> Param:
    nullable = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(members) < len(typing.get_args(annotation))
        annotation = members[0] if len(members) == 1 else Any
        origin = typing.get_origin(annotation)
    optional = default is not inspect.Parameter.empty
    default = None if not optional else default
    choices: tuple[Any, ...] = ()
    if annotation in (str, int, float, bool):
        base = annotation.__name__
    elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        base, choices = "enum", tuple(member.value for member in annotation)
    elif annotation is list or origin is list:
        inner = typing.get_args(annotation)
        base = "list_str" if inner in ((), (str,)) else "list_any"
    elif annotation is dict or origin is dict:
        base = "dict"
    else:
        base = "other"
    return Param(name, base, nullable, optional, default, choices)


def tool_params(adapter: AgentDojoAdapter, tool: str) -> list[Param]:
    function = adapter.tool_function(tool)
    injected = adapter.injected_parameters(tool)
    hints = typing.get_type_hints(function)
    return [
        _param(name, hints.get(name, Any), p.default)
        for name, p in inspect.signature(function).parameters.items()
        if name not in injected
    ]


def _dedupe(values: Iterable[JSON]) -> list[JSON]:
    seen: set[str] = set()
    out = []
    for value in values:
        key = json.dumps(value, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _ranked(found: Harvest, param: str, kind: type | tuple[type, ...]) -> list[JSON]:
    """Harvested values of `kind`, best matches of the parameter's name first (a match of
    the leaf field name counts double), then the rest; ties: shorter first, then by text."""
    wanted = _tokens(param)
    scored = []
    for tokens, leaf, value in found.scored:
        if not isinstance(value, kind) or isinstance(value, bool) != (kind is bool):
            continue
        score = len(wanted & tokens) + 2 * len(wanted & _tokens(leaf))
        scored.append((-score, len(str(value)), str(value), value))
    scored.sort(key=lambda item: item[:3])
    return _dedupe(item[3] for item in scored)


def pool(found: Harvest, param: Param) -> list[JSON]:
    """Values to try for one parameter: the default first (when there is one), harvested
    values ranked by name match, then edge values."""
    values: list[JSON] = []
    if param.optional:
        values.append(param.default)
    base = param.base
    if base == "str":
        ranked = _ranked(found, param.name, str)
        dated = [form for value in ranked[:40] for form in _date_forms(value)]
        matched = ranked[: POOL["str"] - 3]
        values += [*matched, *dated[:3], PROBE_TEXT, ""]
    elif base == "int":
        values += [*_ranked(found, param.name, int)[: POOL["int"]], 0, 1, 3]
    elif base == "float":
        values += [*_ranked(found, param.name, float)[: POOL["float"] - 2], 1.0, 0.0]
    elif base == "bool":
        values += [True, False]
    elif base == "enum":
        values += list(param.choices)
    elif base == "list_str":
        strings = _ranked(found, param.name, str)[: POOL["list"] - 2]
        lists = _ranked(found, param.name, list)[:2]
        values += [*([s] for s in strings), *lists, []]
    elif base == "list_any":
        values += [[]]
    elif base == "dict":
        values += [{}]
    if param.nullable:
        values.append(None)
    return _dedupe(values)


def choices(params: Sequence[Param], pools: dict[str, list[JSON]], budget: int, seed: str):
    """Argument dicts: the aligned rows (every parameter's i-th value), then the whole product
    when it fits in `budget`, else a seeded sample of it."""
    names = [p.name for p in params]
    if not names:
        return [{}]
    out: list[dict[str, JSON]] = []
    seen: set[str] = set()

    def add(args: dict[str, JSON]) -> None:
        key = json.dumps(args, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(args)

    longest = max(len(pools[n]) for n in names)
    for i in range(longest):
        add({n: pools[n][i % len(pools[n])] for n in names})
    size = 1
    for n in names:
        size *= len(pools[n])
    if size <= budget:
        for combo in itertools.product(*(pools[n] for n in names)):
            add(dict(zip(names, combo, strict=True)))
    else:
        rng = random.Random(seed)
        attempts = 0
        while len(out) < budget and attempts < budget * 20:
            attempts += 1
            add({n: rng.choice(pools[n]) for n in names})
    return out[:budget]


# --- probing ---------------------------------------------------------------------------------


@dataclass
class Call:
    tool: str
    args: dict[str, JSON]
    success: bool
    changed: list[str]  # masked paths that changed, dotted
    error: str | None = None


@dataclass
class ToolProbe:
    tool: str
    calls: int = 0
    successes: int = 0
    example: Call | None = None  # the first successful call that changed state
    successful: list[Call] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)


def generalise(path: Path_, env: Any) -> str:
    """A dotted pattern for a snapshot path: model fields are kept, dict keys and list
    positions (data, not names) become `*`."""
    from pydantic import BaseModel

    node = env
    out = []
    for segment in path:
        if isinstance(node, BaseModel):
            out.append(str(segment))
            node = getattr(node, str(segment), None)
        elif isinstance(node, dict):
            out.append("*")
            node = node.get(segment)
        elif isinstance(node, list):
            out.append("*")
            node = node[segment] if isinstance(segment, int) and segment < len(node) else None
        else:
            out.append(str(segment))
            node = None
    return ".".join(out)


@dataclass
class SuiteReport:
    suite: str
    tools: dict[str, ToolProbe]
    clock_paths: dict[str, str]  # pattern -> example "tool(args)"
    declared_volatile: list[str]
    fresh_ms: float
    rebuild_ms: float
    seconds: float

    @property
    def changing(self) -> list[ToolProbe]:
        return [p for p in self.tools.values() if p.example is not None]


class SuiteProber:
    def __init__(self, suite: str, budget: int):
        self.adapter = AgentDojoAdapter(suite)
        self.suite = suite
        self.budget = budget
        self.masks = [parse_pattern(p) for p in self.adapter.volatile_paths()]
        fresh = self.adapter.fresh()
        self.found = harvest(fresh)
        self.clock: dict[str, str] = {}

    def call(self, tool: str, args: dict[str, JSON], env: Any = None) -> tuple[Any, Call]:
        env = self.adapter.fresh() if env is None else env
        pre = mask_state(self.adapter.snapshot(env), self.masks)
        outcome = self.adapter.invoke(env, tool, dict(args))
        post = mask_state(self.adapter.snapshot(env), self.masks)
        changed = [d.dotted() for d in diff(pre, post, limit=200)]
        error = None if outcome.success else f"{outcome.error_type}"
        return env, Call(tool, args, outcome.success, changed, error)

    def probe_tool(self, tool: str) -> ToolProbe:
        params = tool_params(self.adapter, tool)
        pools = {p.name: pool(self.found, p) for p in params}
        report = ToolProbe(tool)
        for args in choices(params, pools, self.budget, f"{self.suite}:{tool}"):
            _, call = self.call(tool, args)
            report.calls += 1
            if not call.success:
                report.errors[call.error or "?"] = report.errors.get(call.error or "?", 0) + 1
                continue
            report.successes += 1
            report.successful.append(call)
            if call.changed and report.example is None:
                report.example = call
        return report

    def recheck(self, steps: Sequence[tuple[str, dict[str, JSON]]]) -> tuple[list[Path_], Any]:
        """Run `steps` on two fresh environments: the unmasked snapshot paths whose values
        differ, and the second environment."""
        states, env = [], None
        for _ in range(2):
            env = self.adapter.fresh()
            for tool, args in steps:
                self.adapter.invoke(env, tool, dict(args))
            states.append(self.adapter.snapshot(env))
        return [d.path for d in diff(states[0], states[1], limit=200)], env

    def note_clock(self, steps: Sequence[tuple[str, dict[str, JSON]]]) -> bool:
        paths, env = self.recheck(steps)
        for path in paths:
            pattern = generalise(path, env)
            self.clock.setdefault(pattern, " ; ".join(_call_text(t, a) for t, a in steps))
        return bool(paths)

    def run(self) -> SuiteReport:
        started = time.perf_counter()
        tools = {tool: self.probe_tool(tool) for tool in self.adapter.tool_names()}
        stamping: list[tuple[str, dict[str, JSON]]] = []
        for probe in tools.values():
            sample = probe.successful[:RECHECKS_PER_TOOL]
            if probe.example is not None and probe.example not in sample:
                sample.append(probe.example)
            for call in sample:
                if self.note_clock([(call.tool, call.args)]):
                    stamping.append((call.tool, call.args))
        self.sequences(stamping)
        fresh_ms, rebuild_ms = time_fresh(self.adapter)
        return SuiteReport(
            suite=self.suite,
            tools=tools,
            clock_paths=dict(sorted(self.clock.items())),
            declared_volatile=self.adapter.volatile_paths(),
            fresh_ms=fresh_ms,
            rebuild_ms=rebuild_ms,
            seconds=time.perf_counter() - started,
        )

    def sequences(self, stamping: list[tuple[str, dict[str, JSON]]]) -> None:
        """A second call after each clock-stamping call, with values new in its post-state."""
        firsts = _dedupe_calls(stamping)
        for tool, args in firsts:
            env, _ = self.call(tool, args)
            new = _new_values(harvest(env), self.found)
            for second in self.adapter.tool_names():
                params = tool_params(self.adapter, second)
                pools = {p.name: pool(new, p) for p in params}
                for second_args in choices(
                    params, pools, SEQUENCE_BUDGET, f"{self.suite}:{tool}:{second}"
                ):
                    self.note_clock([(tool, args), (second, second_args)])


def _new_values(after: Harvest, before: Harvest) -> Harvest:
    """The harvested values of `after` that `before` lacks (the first call's new records)."""
    old = {json.dumps(v, sort_keys=True, default=str) for _, _, v in before.scored}
    out = Harvest()
    for tokens, leaf, value in after.scored:
        if json.dumps(value, sort_keys=True, default=str) not in old:
            out.add(tokens, leaf, value)
    return out


def _dedupe_calls(calls: list[tuple[str, dict[str, JSON]]]) -> list[tuple[str, dict[str, JSON]]]:
    out, seen = [], set()
    for tool, args in calls:
        key = (tool, json.dumps(args, sort_keys=True, default=str))
        if key not in seen and tool not in {t for t, _ in out}:  # one stamping call per tool
            seen.add(key)
            out.append((tool, args))
    return out


def time_fresh(adapter: AgentDojoAdapter, repeat: int = 50) -> tuple[float, float]:
    """Mean milliseconds of `fresh()` (deep copy) and of a rebuild from the suite's YAML."""
    adapter.fresh()
    started = time.perf_counter()
    for _ in range(repeat):
        adapter.fresh()
    fresh = (time.perf_counter() - started) / repeat * 1000
    started = time.perf_counter()
    for _ in range(repeat):
        adapter.rebuild()
    rebuild = (time.perf_counter() - started) / repeat * 1000
    return fresh, rebuild


def _call_text(tool: str, args: dict[str, JSON]) -> str:
    inner = ", ".join(f"{k}={_short(v)}" for k, v in args.items())
    return f"{tool}({inner})"


def _short(value: JSON, limit: int = 60) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def uncovered(report: SuiteReport) -> list[str]:
    """Clock-dependent patterns found here that the adapter's volatile paths do not cover."""
    masks = [parse_pattern(p) for p in report.declared_volatile]
    out = []
    for pattern in report.clock_paths:
        segments = pattern.split(".")
        covered = any(
            len(mask) <= len(segments)
            and all(m == s or m == "*" for m, s in zip(mask, segments, strict=False))
            for mask in masks
        )
        if not covered:
            out.append(pattern)
    return out


# --- output ----------------------------------------------------------------------------------


def _changed_text(paths: list[str], limit: int = 6) -> str:
    shown = ", ".join(f"`{p}`" for p in paths[:limit])
    return shown + (f" (+{len(paths) - limit} more)" if len(paths) > limit else "")


def markdown(reports: list[SuiteReport], budget: int) -> str:
    lines = [
        "# AgentDojo tools that change the environment",
        "",
        "Generated by `python -m harness.targets.agentdojo.enumerate_tools` (do not edit by "
        "hand). Found by probing, not by reading the code: every tool was called with up to "
        f"{budget} argument choices harvested from a fresh environment's snapshot, each call on "
        "its own fresh environment; a tool changes state when a successful call leaves a "
        "snapshot (volatile paths masked) that differs from the fresh one. A tool listed as "
        "read-only had successful calls and none changed state; a tool with no successful "
        "call is listed apart (probing cannot say).",
        "",
        "Clock-dependent paths: each successful call (up to "
        f"{RECHECKS_PER_TOOL} per tool) was repeated on two fresh environments and the two "
        "unmasked snapshots compared, and so were two-step sequences starting with a call "
        "that stamped the clock. Derived/duplicated fields are declared by the adapter "
        "(`DERIVED_PATHS`).",
        "",
    ]
    for report in reports:
        changing = report.changing
        lines += [
            f"## {report.suite}",
            "",
            f"{len(changing)} of {len(report.tools)} tools change state "
            f"({sum(p.calls for p in report.tools.values())} calls, {report.seconds:.1f} s).",
            "",
            "| tool | example call that changed state | paths changed |",
            "|---|---|---|",
        ]
        for probe in changing:
            example = probe.example
            assert example is not None
            lines.append(
                f"| `{probe.tool}` | `{_call_text(example.tool, example.args)}` | "
                f"{_changed_text(example.changed)} |"
            )
        read_only = [p.tool for p in report.tools.values() if p.example is None and p.successes]
        never = [p for p in report.tools.values() if not p.successes]
        listed = ", ".join(f"`{t}`" for t in read_only) or "none"
        lines += ["", f"Read-only (successful calls, no state change): {listed}"]
        if never:
            lines += [
                "",
                "No successful call found (cannot say): "
                + ", ".join(f"`{p.tool}` ({p.calls} calls, {p.errors})" for p in never),
            ]
        declared = ", ".join(f"`{p}`" for p in report.declared_volatile) or "none"
        lines += ["", f"Volatile paths (`volatile_paths()`): {declared}", ""]
        if report.clock_paths:
            lines += ["Clock-dependent paths found by probing:", ""]
            lines += [f"- `{p}` — e.g. `{example}`" for p, example in report.clock_paths.items()]
        else:
            lines += ["Clock-dependent paths found by probing: none"]
        missing = uncovered(report)
        if missing:
            lines += ["", "**Not covered by the adapter's volatile paths:** " + ", ".join(missing)]
        if report.suite in NOTES:
            lines += ["", f"Note: {NOTES[report.suite]}"]
        ratio = report.rebuild_ms / report.fresh_ms if report.fresh_ms else float("nan")
        lines += [
            "",
            f"`fresh()` (deep copy of the cached default environment): {report.fresh_ms:.2f} ms; "
            f"rebuild from the suite's YAML: {report.rebuild_ms:.2f} ms; ratio {ratio:.0f}x.",
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", choices=SUITES, help="only this suite")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="calls per tool")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--no-write", action="store_true", help="print, do not write the file")
    args = parser.parse_args(argv)
    reports = []
    for suite in args.suite or SUITES:
        report = SuiteProber(suite, args.budget).run()
        reports.append(report)
        print(f"== {suite}: {len(report.changing)} of {len(report.tools)} tools change state")
        for probe in report.changing:
            assert probe.example is not None
            print(
                f"  {probe.tool}: {_call_text(probe.tool, probe.example.args)} -> "
                + ", ".join(probe.example.changed[:4])
            )
        for probe in report.tools.values():
            if not probe.successes:
                print(f"  (no successful call) {probe.tool}: {probe.errors}")
        print(f"  clock-dependent: {', '.join(report.clock_paths) or 'none'}")
        print(f"  volatile_paths(): {', '.join(report.declared_volatile) or 'none'}")
        print(
            f"  fresh {report.fresh_ms:.2f} ms, rebuild {report.rebuild_ms:.2f} ms "
            f"({report.rebuild_ms / report.fresh_ms:.0f}x); probing took {report.seconds:.1f} s"
        )
    text = markdown(reports, args.budget)
    if not args.no_write:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    missing = {r.suite: uncovered(r) for r in reports if uncovered(r)}
    if missing:
        print(f"clock-dependent paths not covered by volatile_paths(): {missing}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`harness draw`: enumerate the pool, snapshot it to disk, draw a seeded, stratified sample.

Written to `mutants/<plan>/`: `pool.json` (every candidate pair with its screening
status, so the sample can be re-derived without the targets), `manifest.json` (the drawn
pairs with their mutants, the liveness corpus, and per arm and operator the pool size
before and after each screen), `diffs/<mutant>.diff` (one unified diff per mutant) and a
README index for review before scoring. The folder is replaced whole, never half-written.

Screening (`harness.mutation.screen`, the plan's `screening.rule`): a candidate that does
not compile, fails where its function is defined, is bytecode-identical to the original or
duplicates an earlier candidate of its site stays in `pool.json` with that status and is
never drawn. An arm's operator with no candidate left is reported at draw time with the
reason (`harness.mutation.empty`), and shown as "no candidates" in every report.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.checker.verdicts import Verdict
from harness.errors import Problem, UserError, read_json_model
from harness.execution.liveness import build_corpus
from harness.execution.negative_controls import (
    NEGATIVE_CONTROLS_ARM,
    ContractPatch,
    NegativeControl,
    control_mutant,
    load_control,
)
from harness.execution.plan import ArmSpec, Plan, no_file_in_the_way
from harness.execution.recorded_calls import drawn_halves
from harness.mutation.model import Mutant
from harness.mutation.screen import SCREENS, Screener, ScreenStatus
from harness.targets.registry import Target, load_target

CORPUS_SCHEMA_VERSION = 1


class PoolEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    pair_id: str
    mutant_id: str
    arm: str
    operator: str
    tool: str
    screen: ScreenStatus = ScreenStatus.KEPT


class OperatorPool(BaseModel):
    """One arm's pool for one operator: pairs offered, removed by each screen, left, drawn;
    `empty_reason` when none is left to draw."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    arm: str
    kind: str
    target: str
    operator: str
    offered: int
    screened: dict[str, int]  # screen status -> pairs it removed (every screen, 0 included)
    kept: int
    drawn: int
    empty_reason: str | None = None


class DrawnPair(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    pair_id: str
    arm: str
    tool: str
    mutant: Mutant
    predicted: Verdict | None = None
    contract_patch: ContractPatch | None = None


class Corpus(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = CORPUS_SCHEMA_VERSION
    plan: str
    seed: int
    pairs: list[DrawnPair]
    liveness: dict[str, dict[str, list[dict[str, Any]]]]  # target -> tool -> calls
    screening_rule: str | None = None  # None: drawn before screening existed
    pools: list[OperatorPool] = []
    # target -> tool -> the probe half of its recorded calls (plan `recorded_calls:`), for
    # the checker; left out of the manifest when empty, so older draws read the same
    recorded_probes: dict[str, dict[str, list[dict[str, Any]]]] = {}
    # the SHA-256 of the plan's settings the draw read (`draw_settings_hash`), so that a
    # freeze can refuse a plan edited since; None for draws made before it was recorded
    drawn_from: str | None = None


# The plan fields `draw` reads: an edit to any of them after the draw makes the drawn pairs
# another plan's (its predictions, checker, timeouts and statistics may change until the
# freeze without drawing again)
DRAW_SETTINGS = frozenset(
    {
        "name",
        "seed",
        "arms",
        "negative_controls",
        "liveness_probes_per_tool",
        "recorded_calls",
        "screening",
    }
)


def draw_settings_hash(plan: Plan) -> str:
    """SHA-256 of the canonical JSON of the plan's `DRAW_SETTINGS`."""
    settings = plan.model_dump(mode="json", include=set(DRAW_SETTINGS))
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def check_drawn_from(plan_path: Path, plan: Plan, corpus: Corpus) -> None:
    """Refuse a drawn corpus whose plan's draw settings changed since the draw."""
    if corpus.drawn_from is not None and corpus.drawn_from != draw_settings_hash(plan):
        raise UserError(
            Problem(
                str(plan_path),
                "draw settings",
                "changed since the draw (one of " + ", ".join(sorted(DRAW_SETTINGS)) + "): "
                "the drawn pairs are another plan's",
                f"draw again (`harness draw {plan_path}`), or revert the plan",
            )
        )


def check_as_drawn(plan_path: Path, plan: Plan, root: Path, corpus: Corpus) -> None:
    """Refuse a drawn corpus the plan or its negative controls no longer match: the draw
    settings changed since the draw, or a control file did (its `predicted`, tool,
    replacement or contract patch). The freeze hashes the control files, not the drawn
    pairs' agreement with them, and a run scores the drawn pair: without this, a control
    edited between draw and freeze would be frozen as it reads and scored as it was drawn."""
    check_drawn_from(plan_path, plan, corpus)
    now = control_pairs(plan, root, with_control_targets(plan, root, {}))
    drawn = [p for p in corpus.pairs if p.arm == NEGATIVE_CONTROLS_ARM]
    for spec, pair in zip(plan.negative_controls, now, strict=False):
        if pair not in drawn:
            raise UserError(
                Problem(
                    str(root / "controls" / f"{spec.id}.yaml"),
                    "control",
                    "changed since the draw: the drawn pair is not the control as it reads now",
                    f"draw again (`harness draw {plan_path}`), or revert the control",
                )
            )


def corpus_dir(root: Path, plan: Plan) -> Path:
    return root / "mutants" / plan.name


def arm_tools(arm: ArmSpec, target: Target, plan_file: str = "plan") -> list[str]:
    """The arm's tools on `target`. With several targets, an explicit tool list keeps the
    tools each target has; a tool no target of the arm has is an error."""
    available = sorted(target.contracts)
    if arm.tools == "all":
        return available
    if len(arm.targets) == 1:
        unknown = sorted(set(arm.tools) - set(available))
    else:
        from harness.targets.registry import load_target as _load

        known = {t for name in arm.targets for t in _load(name).contracts}
        unknown = sorted(set(arm.tools) - known)
    if unknown:
        raise UserError(
            Problem(
                plan_file,
                f"arms[{arm.name}].tools",
                f"{unknown[0]!r} has no contract in {', '.join(arm.targets)}",
                f"use tools from: {', '.join(available)}",
            )
        )
    return sorted(set(arm.tools) & set(available))


def expand_operators(arm: ArmSpec, plan_file: str = "plan") -> list[str]:
    """Operator names, with shell-style patterns (`CR-core/*`, `MM-*`) expanded in sorted order."""
    from harness.mutation.registry import all_operators

    names: list[str] = []
    for name in arm.operators:
        if not any(ch in name for ch in "*?["):
            names.append(name)
            continue
        matched = sorted(n for n in all_operators() if fnmatch.fnmatchcase(n, name))
        if not matched:
            raise UserError(
                Problem(
                    plan_file,
                    f"arms[{arm.name}].operators",
                    f"pattern {name!r} matches no operator",
                    "check the family prefix (M-, C-, CR-core/, MM-); "
                    "`harness list operators` names every operator",
                )
            )
        names += matched
    return list(dict.fromkeys(names))


def checked_operators(arm: ArmSpec, plan_file: str) -> list[str]:
    """The arm's operators, expanded; each must be registered and of the arm's kind."""
    from harness.mutation.registry import all_operators, get_operator

    operators = expand_operators(arm, plan_file)
    where = f"arms[{arm.name}].operators"
    for name in operators:
        try:
            operator = get_operator(name)
        except KeyError as exc:
            known = sorted(n for n, o in all_operators().items() if o.arm.value == arm.kind.value)
            raise UserError(
                Problem(
                    plan_file,
                    where,
                    f"unknown operator {name!r}",
                    f"use one of {', '.join(known)} (`harness list operators`)",
                )
            ) from exc
        if operator.arm.value != arm.kind.value:
            raise UserError(
                Problem(
                    plan_file,
                    where,
                    f"{name} belongs to arm kind {operator.arm.value}, not {arm.kind.value}",
                    "move it to an arm of that kind",
                )
            )
    return operators


def checkers_known(plan: Plan, plan_file: str) -> None:
    """Refuse a checker name (`checker`, `comparison_checkers`) that resolves to no checker,
    naming the plan's field: said at the draw and `plan check`, before any work, as a run
    and `freeze` would say it later."""
    from harness.checker_registry import resolve_checker

    named = [("checker", plan.checker)] + [
        (f"comparison_checkers[{i}]", name) for i, name in enumerate(plan.comparison_checkers)
    ]
    problems = []
    for field, name in named:
        try:
            resolve_checker(name)
        except UserError as exc:
            problems += [Problem(plan_file, field, p.message, p.fix) for p in exc.problems]
    if problems:
        raise UserError(problems)


def check_plan(plan: Plan, plan_file: str, targets: dict[str, Target]) -> None:
    """What the plan's schema cannot check alone: every checker it names resolves, every
    operator is registered and of its arm's kind, every tool has a contract. `draw` and
    every `run` (post hoc too) ask."""
    checkers_known(plan, plan_file)
    for arm in plan.arms:
        checked_operators(arm, plan_file)
        for name in arm.targets:
            arm_tools(arm, targets[name], plan_file)


def build_pool(
    plan: Plan, targets: dict[str, Target], plan_file: str = "plan"
) -> tuple[list[PoolEntry], dict[str, Mutant]]:
    """Every candidate pair of every arm, each with its screening status."""
    from harness.mutation.enumerate import enumerate_pairs

    entries: list[PoolEntry] = []
    mutants: dict[str, Mutant] = {}
    screeners: dict[str, Screener] = {}
    for arm in plan.arms:
        operators = checked_operators(arm, plan_file)
        for name in arm.targets:
            target = targets[name]
            root = Path(target.adapter.source_root())
            screener = screeners.setdefault(target.name, Screener(root))
            for pair in enumerate_pairs(target, arm_tools(arm, target, plan_file), operators):
                mutants[pair.mutant.id] = pair.mutant
                entries.append(
                    PoolEntry(
                        pair_id=pair.id,
                        mutant_id=pair.mutant.id,
                        arm=arm.name,
                        operator=pair.mutant.operator,
                        tool=pair.tool,
                        screen=screener.status(pair.mutant),
                    )
                )
    return entries, mutants


def operator_pools(
    plan: Plan,
    targets: dict[str, Target],
    pool: list[PoolEntry],
    drawn: list[PoolEntry],
) -> list[OperatorPool]:
    """Per arm and operator (plan order): the pool before and after each screen, and why
    an operator has nothing to draw."""
    from harness.mutation.empty import empty_reason

    out = []
    for arm in plan.arms:
        for operator in expand_operators(arm):
            mine = [e for e in pool if e.arm == arm.name and e.operator == operator]
            screened = {s.value: sum(e.screen is s for e in mine) for s in SCREENS}
            kept = sum(e.screen is ScreenStatus.KEPT for e in mine)
            reason = None
            if kept == 0:
                reasons = [
                    empty_reason(operator, targets[t], arm_tools(arm, targets[t]), screened)
                    for t in arm.targets
                ]
                reason = "; ".join(dict.fromkeys(reasons))
            out.append(
                OperatorPool(
                    arm=arm.name,
                    kind=arm.kind.value,
                    target=", ".join(arm.targets),
                    operator=operator,
                    offered=len(mine),
                    screened=screened,
                    kept=kept,
                    drawn=sum(e.arm == arm.name and e.operator == operator for e in drawn),
                    empty_reason=reason,
                )
            )
    return out


def draw_sample(plan: Plan, pool: list[PoolEntry], exclude: set[str]) -> list[PoolEntry]:
    """Per arm and operator, `draw_per_operator` pairs; stratified: round-robin over tools
    in a seeded order, each tool's pairs in a seeded order. An arm with `draw: all` takes
    every kept candidate, in pool order: a census is the whole pool, so `exclude` (the
    pairs earlier freezes used, for `--refreeze`) applies to sampled arms only, and a
    refrozen census scores the pairs its last freeze scored, pair for pair."""
    drawn: list[PoolEntry] = []
    for arm in plan.arms:
        for operator in expand_operators(arm):
            rng = random.Random(f"{plan.seed}:{arm.name}:{operator}")
            candidates = [
                e
                for e in pool
                if e.arm == arm.name
                and e.operator == operator
                and e.screen is ScreenStatus.KEPT  # a screened candidate is never drawn
                and (arm.draw_per_operator is None or e.pair_id not in exclude)
            ]
            if arm.draw_per_operator is None:  # draw: all: the whole screened pool
                drawn += candidates
                continue
            if arm.stratify_by == "none":
                drawn += rng.sample(candidates, min(arm.draw_per_operator, len(candidates)))
                continue
            by_tool: dict[str, list[PoolEntry]] = defaultdict(list)
            for entry in candidates:
                by_tool[entry.tool].append(entry)
            tools = sorted(by_tool)
            rng.shuffle(tools)
            for tool in tools:
                rng.shuffle(by_tool[tool])
            chosen: list[PoolEntry] = []
            while len(chosen) < arm.draw_per_operator and any(by_tool.values()):
                for tool in tools:
                    if by_tool[tool] and len(chosen) < arm.draw_per_operator:
                        chosen.append(by_tool[tool].pop(0))
            drawn += chosen
    return drawn


def _readme(plan: Plan, corpus: Corpus) -> str:
    lines = [
        f"# Drawn corpus of plan `{plan.name}`",
        "",
        f"Seed {plan.seed}; {len(corpus.pairs)} pairs. Written by `harness draw`; do not edit.",
        "Each row links the unified diff of its mutant against the installed target.",
        "",
        f"## Pool per operator (screening rule `{corpus.screening_rule}`)",
        "",
        "Pairs offered, removed by each screen, left to draw, drawn. A screened candidate "
        "stays in pool.json with its status and is never drawn.",
        "",
        "| arm | operator | offered | "
        + " | ".join(s.value for s in SCREENS)
        + " | kept | drawn |",
        "| --- | --- | --- | " + " | ".join("---" for _ in SCREENS) + " | --- | --- |",
    ]
    for p in corpus.pools:
        removed = " | ".join(str(p.screened.get(s.value, 0)) for s in SCREENS)
        kept = f"{p.kept}" if p.kept else f"0 (no candidates: {p.empty_reason})"
        lines.append(f"| {p.arm} | {p.operator} | {p.offered} | {removed} | {kept} | {p.drawn} |")
    lines += [
        "",
        "## Drawn pairs",
        "",
        "| pair | arm | operator | tool | function | diff |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in corpus.pairs:
        m = p.mutant
        lines.append(
            f"| `{p.pair_id}` | {p.arm} | {m.operator} | {p.tool} | "
            f"`{m.site.qualname}` ({m.site.file}:{m.site.start_line}) | "
            f"[diff](diffs/{m.id}.diff) |"
        )
    return "\n".join(lines) + "\n"


def write_corpus(folder: Path, plan: Plan, pool: list[PoolEntry], corpus: Corpus) -> None:
    """Replace the drawn corpus folder whole: written aside and swapped in by rename, so an
    interrupt or a write error leaves the previous draw as it was (`atomic.staged_folder`)."""
    from harness.execution.atomic import staged_folder

    folder.parent.mkdir(parents=True, exist_ok=True)
    # a field left out when empty, as in the manifests of draws made before it existed
    left_out = {
        field
        for field, empty in (("recorded_probes", {}), ("drawn_from", None))
        if getattr(corpus, field) == empty
    } or None
    with staged_folder(folder) as tmp:
        (tmp / "diffs").mkdir()
        pool_json = {"plan": plan.name, "entries": [e.model_dump() for e in pool]}
        (tmp / "pool.json").write_text(json.dumps(pool_json, indent=1, sort_keys=True) + "\n")
        (tmp / "manifest.json").write_text(
            corpus.model_dump_json(indent=1, exclude=left_out) + "\n"
        )
        for pair in corpus.pairs:
            (tmp / "diffs" / f"{pair.mutant.id}.diff").write_text(pair.mutant.diff)
        (tmp / "README.md").write_text(_readme(plan, corpus))


def planned_controls(plan: Plan, root: Path) -> list[NegativeControl]:
    """Each negative control the plan names, read; one whose target no arm of the plan
    names is refused: a run's workers load only the plan's targets, and the freeze hashes
    only theirs."""
    controls = []
    for spec in plan.negative_controls:
        control = load_control(root, spec.id)
        if control.target not in plan.targets():
            raise UserError(
                Problem(
                    str(root / "controls" / f"{spec.id}.yaml"),
                    "target",
                    f"{control.target} is no target of the plan's arms: a run would not load it"
                    " and the freeze would not hash it",
                    "name a target an arm of the plan names, or add it to an arm's targets",
                )
            )
        controls.append(control)
    return controls


def with_control_targets(plan: Plan, root: Path, targets: dict[str, Target]) -> dict[str, Target]:
    """`targets` (the plan's, loaded) with the target of each negative control added."""
    for control in planned_controls(plan, root):
        if control.target not in targets:
            targets[control.target] = load_target(control.target)
    return targets


def control_pairs(plan: Plan, root: Path, targets: Mapping[str, Target]) -> list[DrawnPair]:
    """Every negative control the plan lists, as a pair (controls are not sampled), each
    checked against the plan and its target: its predicted verdict, tool and replacement.
    `targets` holds each control's target (`with_control_targets`)."""
    pairs = []
    for spec in plan.negative_controls:
        control = load_control(root, spec.id)
        path = str(root / "controls" / f"{spec.id}.yaml")
        if control.predicted is not spec.predicted:
            raise UserError(
                Problem(
                    path,
                    "predicted",
                    f"the plan predicts {spec.predicted} but the control says {control.predicted}",
                    "make the two agree (before the first run)",
                )
            )
        mutant = control_mutant(control, targets[control.target], path)
        pair = DrawnPair(
            pair_id=f"{mutant.id}:{control.tool}",
            arm=NEGATIVE_CONTROLS_ARM,
            tool=control.tool,
            mutant=mutant,
            predicted=spec.predicted,
            contract_patch=control.contract_patch,
        )
        _kept_as_written(pair, path)
        pairs.append(pair)
    return pairs


def _kept_as_written(pair: DrawnPair, path: str) -> None:
    """Refuse a control value the drawn corpus (JSON) would not keep as the control file
    says it: a run scores the drawn pair, so an unquoted date would be probed as a string,
    `.inf` as null, and bytes that are not UTF-8 could not be written at all."""
    from pydantic import ValidationError
    from pydantic_core import PydanticSerializationError

    try:
        kept = DrawnPair.model_validate_json(pair.model_dump_json()) == pair
    except (PydanticSerializationError, ValidationError, ValueError):
        kept = False
    if not kept:
        raise UserError(
            Problem(
                path,
                "contract_patch",
                "holds a value a drawn corpus cannot keep as written (an unquoted date, "
                ".inf, .nan, !!binary)",
                "quote it, or write a plain number, string, list or mapping",
            )
        )


def draw(
    plan: Plan,
    root: Path,
    *,
    refreeze: bool = False,
    check: Callable[[Corpus], None] | None = None,
    plan_file: str | None = None,
) -> Corpus:
    """Draw the plan's pairs and write them under mutants/<plan>/, replacing the previous
    draw whole; `check` (the predictions' decidability) may refuse the draw before anything
    is written. A frozen plan is refused unless `refreeze`, which draws sampled arms from
    the pairs no freeze of it used."""
    from harness.execution.freeze import read_record

    plan_file = plan_file or f"plans/{plan.name}.yaml"  # errors name the path as given
    record = read_record(root, plan)
    if record is not None and not refreeze:
        raise UserError(
            Problem(
                plan_file,
                "freeze",
                f"the plan is frozen (freeze {record.freeze_id}); drawing again changes its sample",
                "pass --refreeze (refreeze=True) to draw sampled arms from the pairs no "
                "freeze used (census arms take every candidate again)",
            )
        )
    exclude = record.all_used() if record is not None else set()
    checkers_known(plan, plan_file)
    no_file_in_the_way(root, "mutants", plan.name)
    targets = with_control_targets(plan, root, {name: load_target(name) for name in plan.targets()})
    pool, mutants = build_pool(plan, targets, plan_file)
    sample = draw_sample(plan, pool, exclude)
    pools = operator_pools(plan, targets, pool, sample)
    pairs = [
        DrawnPair(pair_id=e.pair_id, arm=e.arm, tool=e.tool, mutant=mutants[e.mutant_id])
        for e in sample
    ] + control_pairs(plan, root, targets)
    liveness: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for target in targets.values():
        # keyed like the mutants, by the adapter's name: a plan may name the target by
        # `package.module:Class` as well as by its registered name
        tools = sorted({p.tool for p in pairs if p.mutant.target == target.name})
        liveness[target.name] = {
            tool: build_corpus(
                target.adapter, target.contracts[tool], plan.seed, plan.liveness_probes_per_tool
            )
            for tool in tools
        }
    touched = {name: list(by_tool) for name, by_tool in liveness.items()}
    recorded_liveness, recorded_probes = drawn_halves(plan, root, targets.values(), touched)
    for name, by_tool in recorded_liveness.items():
        for tool, calls in by_tool.items():
            liveness[name][tool] = [*liveness[name][tool], *calls]  # sampled calls first
    corpus = Corpus(
        plan=plan.name,
        seed=plan.seed,
        pairs=pairs,
        liveness=liveness,
        screening_rule=plan.screening.rule,
        pools=pools,
        recorded_probes=recorded_probes,
        drawn_from=draw_settings_hash(plan),
    )
    duplicates = duplicate_pairs(pairs)
    if duplicates:  # two targets offering one mutant for one tool name: an adapter bug
        raise UserError(
            Problem(
                plan_file,
                "arms",
                f"pair {duplicates[0]} is drawn twice",
                "give each target a distinct version() string",
            )
        )
    if check is not None:
        check(corpus)
    write_corpus(corpus_dir(root, plan), plan, pool, corpus)
    return corpus


def load_corpus(root: Path, plan: Plan) -> Corpus:
    path = corpus_dir(root, plan) / "manifest.json"
    if not path.exists():
        raise UserError(
            Problem(
                str(path),
                "file",
                "the plan has no drawn corpus",
                f"run `harness draw plans/{plan.name}.yaml` first",
            )
        )
    corpus = read_json_model(
        path, Corpus, f"restore the draw from git, or run `harness draw plans/{plan.name}.yaml`"
    )
    duplicates = duplicate_pairs(corpus.pairs)
    if duplicates:
        raise UserError(
            Problem(
                str(path),
                "pairs",
                f"pair {duplicates[0]} is drawn more than once",
                "draw the plan again",
            )
        )
    return corpus


def duplicate_pairs(pairs: list[DrawnPair]) -> list[str]:
    """Pair ids that occur more than once (a pair is scored once: one ledger row)."""
    counts: dict[str, int] = {}
    for pair in pairs:
        counts[pair.pair_id] = counts.get(pair.pair_id, 0) + 1
    return sorted(pair_id for pair_id, n in counts.items() if n > 1)

"""Pre-registered plans: what is drawn, how it is scored, and what is predicted, fixed
before any number exists. One YAML file under `plans/`; its JSON Schema is exported by
`harness plan schema`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, model_validator

from harness.checker.verdicts import Verdict
from harness.contracts.loader import load_model
from harness.errors import Problem, UserError
from harness.mutation.model import Arm

PLAN_SCHEMA_VERSION = 1
SCORING_RULE = "differential-v1"  # detected = a VIOLATES the baseline of the original lacked


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _twice(values: list[str]) -> str | None:
    """The first value listed a second time, if any."""
    seen: set[str] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


class ArmSpec(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=100)  # a folder-safe word
    kind: Arm
    target: str | list[str] = Field(
        description="A target, or several (e.g. a controls arm over every suite): the arm's "
        "operators are enumerated on each, and its draw stratified over all their tools"
    )
    tools: list[str] | Literal["all"] = "all"
    operators: list[str] = Field(min_length=1)
    draw: Literal["sample", "all"] = Field(
        default="sample",
        description="sample: draw_per_operator pairs per operator, seeded and stratified; "
        "all: every screened (kept) candidate of the arm, in pool order (an exhaustive arm)",
    )
    draw_per_operator: StrictInt | None = Field(
        default=None,
        ge=1,
        description="Pairs drawn per operator (fewer if the pool is smaller); required with "
        "draw: sample, not allowed with draw: all",
    )
    stratify_by: Literal["tool", "none"] = "tool"

    @property
    def targets(self) -> list[str]:
        """The arm's targets, in the order written."""
        return [self.target] if isinstance(self.target, str) else list(self.target)

    @model_validator(mode="after")
    def _some_target(self) -> ArmSpec:
        if not self.targets or len(set(self.targets)) != len(self.targets):
            raise ValueError("target: name one target, or a list of distinct targets")
        for field, values in (("tools", self.tools), ("operators", self.operators)):
            if isinstance(values, list) and (twice := _twice(values)) is not None:
                raise ValueError(f"{field}: {twice!r} is listed twice")
        if self.draw == "sample" and self.draw_per_operator is None:
            raise ValueError("draw_per_operator: required with draw: sample (or write draw: all)")
        if self.draw == "all" and self.draw_per_operator is not None:
            raise ValueError(
                "draw_per_operator: draw: all scores every candidate; remove draw_per_operator"
            )
        return self


CONTROL_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # a file name under controls/, never a path


class NegativeControlSpec(_Strict):
    """A negative control under `controls/` and the verdict predicted for its tool."""

    id: str = Field(pattern=CONTROL_ID, max_length=200)
    predicted: Verdict


# Strict numbers: YAML's `true`, `"12"` or `1.0` for a count is a mistake, never a 1 or a 12
Share = Annotated[StrictFloat, Field(ge=0.0, le=1.0)]
POOLED_KEY = "all"  # a prediction key naming every operator of its arms pooled
TOY_TARGET = "toy_domain"  # the target of scope toy (harness.analysis.scoring.scope_of)
SCREENING_RULES = ("compile-define-bytecode-v1",)


class Screening(_Strict):
    """How the pool is screened at enumeration (`harness.mutation.screen`): part of the
    plan and of its freeze, so it cannot change silently between freezes."""

    rule: Literal["compile-define-bytecode-v1"] = Field(
        default="compile-define-bytecode-v1",
        description="compile-define-bytecode-v1: a candidate that does not compile with its "
        "module's flags, fails where its function is defined, is bytecode-identical to the "
        "original (not for controls) or duplicates an earlier candidate of the same operator "
        "at the same site stays in pool.json with that status and is never drawn",
    )


class RecordedCalls(_Strict):
    """The recorded-call corpora a plan uses (`harness corpus record`): each target's tasks
    split, seeded, into a liveness half and a probe half that never meet."""

    corpora: str = Field(
        default="corpora",
        description="Folder of <target>.json corpora, relative to the project root; every "
        "target of the plan whose adapter ships tasks must have one",
    )
    split_seed: StrictInt = Field(
        description="Seed of the split by task (harness.targets.recorded)"
    )
    liveness_per_tool: StrictInt | None = Field(
        default=None,
        ge=1,
        description="At most this many recorded calls per tool join the liveness corpus (a "
        "seeded choice); none: every call of the liveness half",
    )


def _scopes_once(spec: BetterThan | SameAs) -> BetterThan | SameAs:
    """A scope listed twice would be scored, and counted among the verdict's, twice."""
    if (twice := _twice(spec.scopes)) is not None:
        raise ValueError(f"scopes: {twice!r} is listed twice")
    return spec


class BetterThan(_Strict):
    """This plan's checker beats a published run, scored on the closed-world pairs both
    share (`harness.analysis.paired`: paired table, support rule, McNemar's exact test)."""

    run: str = Field(
        description="The published run folder, relative to the project root "
        "(results/reference/<plan>/<run>)"
    )
    scopes: list[str] = Field(
        default_factory=lambda: ["toy", "real", "pooled"],
        min_length=1,
        description="The scopes predicted, each scored on its own shared pairs: toy, real, "
        "pooled, or a benchmark of the real targets (the name before the first `-`: "
        "agentdojo, tau2, bfcl)",
    )
    _check_scopes = model_validator(mode="after")(_scopes_once)


class SameAs(_Strict):
    """This plan's checker decides every pair it shares with a published run exactly as that
    run did, on the pairs of every arm both share (`harness.analysis.same_as`: the ledger's
    decision columns, pair for pair; no interval: a claim about those pairs, not a sample)."""

    run: str = Field(
        description="The published run folder, relative to the project root "
        "(results/reference/<plan>/<run>)"
    )
    scopes: list[str] = Field(
        default_factory=lambda: ["pooled"],
        min_length=1,
        description="The scopes predicted, each scored on its own shared pairs: toy, real, "
        "pooled, or a benchmark of the real targets (the name before the first `-`: "
        "agentdojo, tau2, bfcl); each one an arm of the plan draws from",
    )
    _check_scopes = model_validator(mode="after")(_scopes_once)


class Predictions(_Strict):
    """What the plan expects, scored after every run (`harness.analysis.predictions`): a
    floor holds when the whole 95% interval lies at or above it, a ceiling when it lies at
    or below it; it fails when the interval lies wholly on the other side."""

    recall_floor: dict[str, Share] = Field(
        default_factory=dict,
        description="Closed-world operator (or `all`) -> recall (detected / n) expected at "
        "least, in every scope that has its pairs (toy, real, pooled)",
    )
    benchmark_recall_floor: dict[str, dict[str, Share]] = Field(
        default_factory=dict,
        description="Benchmark -> closed-world operator (or `all`) -> recall on that "
        "benchmark's pairs alone expected at least; a benchmark is a target name or the "
        "prefix before `-` of target names (`bfcl` for bfcl-file-system, bfcl-message, ...): "
        "how a held-out benchmark's own claims are registered",
    )
    precision_floor: Share | None = Field(
        default=None,
        description="Flag precision (correct flags / all flags, over mutants, controls and "
        "negative controls) expected at least, in every scope that has flags",
    )
    escape_rate_ceiling: dict[str, Share] = Field(
        default_factory=dict,
        description="Open-world operator, `<family>/*` or `all` -> escape rate (live "
        "misses / live pairs) expected at most",
    )
    undecidable: Literal["warn", "error"] = Field(
        default="warn",
        description="A prediction that can never hold at its drawn n (`harness plan check`): "
        "warn (the default) prints it at draw and freeze; error makes them refuse",
    )
    better_than: list[BetterThan] = Field(
        default_factory=list,
        description="Published runs this checker is predicted to beat, per scope, on the "
        "pairs both share (held / failed / undecided: README, Predictions that compare)",
    )
    same_as: list[SameAs] = Field(
        default_factory=list,
        description="Published runs whose decisions this checker is predicted to repeat on "
        "every pair both share (held / failed / undecided: docs/workflow.md, Predictions "
        "that change nothing)",
    )
    notes: str | None = None


MAX_LIVENESS_PROBES = 1000
# Generous: a worker with AgentDojo loaded maps well under 2 GiB; the bound is for mutants.
DEFAULT_MEMORY_LIMIT_MB = 16384


class Plan(_Strict):
    schema_version: Literal[1] = PLAN_SCHEMA_VERSION
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    description: str
    seed: StrictInt
    checker: str = Field(
        default="reference",
        description="A registered checker (reference, static-scanner) or package.module:Class",
    )
    comparison_checkers: list[str] = Field(
        default_factory=list,
        description="Further checkers frozen with the plan; `harness run PLAN --checker NAME` "
        "runs one of them into its own run folder, for `harness compare`",
    )
    checker_seed: StrictInt = 0
    scoring: Literal["differential-v1"] = SCORING_RULE
    # bounded: past them the OS refuses the limit (setitimer, setrlimit) and every pair
    # would be recorded as a crash
    timeout_seconds: StrictFloat = Field(default=20.0, gt=0, le=86_400, allow_inf_nan=False)
    memory_limit_mb: StrictInt = Field(
        default=DEFAULT_MEMORY_LIMIT_MB,
        gt=0,
        le=1 << 20,  # 1 TiB
        description="A pair's worker whose address space (VmSize) exceeds this many MiB is "
        "killed and its pair recorded as a crash; the default is in the harness code the "
        "freeze hashes",
    )
    liveness_probes_per_tool: StrictInt = Field(
        default=12,
        ge=1,
        le=MAX_LIVENESS_PROBES,
        description="Sampled liveness calls per tool (each costs every pair of the tool a "
        "call; drawing a billion would not end)",
    )
    screening: Screening = Screening()
    held_out: list[str] = Field(
        default_factory=list,
        description="Targets of this plan on which no committed ledger of the repository may "
        "hold a pair before its freeze; `harness freeze` and `harness publish` verify it "
        "from git history (harness.execution.held_out): the blind measurement",
    )
    recorded_calls: RecordedCalls | None = Field(
        default=None,
        description="Recorded calls of the benchmarks' reference solutions: the liveness half "
        "joins the liveness corpus, the probe half goes to the checker (1.3.0 probes from "
        "their pre-states); both are drawn into the corpus and hashed by the freeze",
    )
    arms: list[ArmSpec] = Field(min_length=1)
    negative_controls: list[NegativeControlSpec] = Field(default_factory=list)
    predictions: Predictions = Predictions()
    statistics: list[Literal["wilson", "design_effect", "evidence_bounds"]] = Field(
        default_factory=lambda: ["wilson", "design_effect", "evidence_bounds"]
    )

    @model_validator(mode="after")
    def _unique(self) -> Plan:
        names = [a.name for a in self.arms]
        if len(set(names)) != len(names):
            raise ValueError("arms: arm names must be unique")
        ids = [c.id for c in self.negative_controls]
        if len(set(ids)) != len(ids):
            raise ValueError("negative_controls: control ids must be unique")
        for field, values in (
            ("comparison_checkers", self.comparison_checkers),
            ("statistics", list(self.statistics)),
        ):
            if (twice := _twice(values)) is not None:
                raise ValueError(f"{field}: {twice!r} is listed twice")
        unknown = sorted(set(self.held_out) - set(self.targets()))
        if unknown:
            raise ValueError(
                f"held_out: {', '.join(unknown)} is no target of the plan's arms; name one of "
                + ", ".join(self.targets())
            )
        return self

    def targets(self) -> list[str]:
        return sorted({t for a in self.arms for t in a.targets})


def load_plan(path: Path) -> Plan:
    """Read and validate a plan; every problem names the file and field."""
    plan = load_model(path, Plan, "name")
    if plan.name != path.stem:
        raise UserError(
            Problem(
                str(path),
                "name",
                f"plan name {plan.name!r} differs from the file name",
                f"write name: {path.stem}",
            )
        )
    problems = prediction_problems(plan, str(path))
    problems += _compared_runs(plan, path)
    if problems:
        raise UserError(problems)
    return plan


def _compared(plan: Plan) -> Iterator[tuple[str, int, BetterThan | SameAs]]:
    """Every prediction that names a published run: (its list's field path, its index in
    that list, the prediction), `better_than` first."""
    for field, specs in (
        ("predictions.better_than", plan.predictions.better_than),
        ("predictions.same_as", plan.predictions.same_as),
    ):
        for index, spec in enumerate(specs):
            yield field, index, spec


def _compared_runs(plan: Plan, path: Path) -> list[Problem]:
    """A compared run (`better_than`, `same_as`) must be there to compare with (relative to
    the project root)."""
    if path.resolve().parent.name != "plans":
        return []
    root = path.resolve().parent.parent
    fix = "name a published run folder, relative to the project root (results/reference/PLAN/RUN)"
    problems = []
    for field, index, spec in _compared(plan):
        # judged as written, links not followed: a results/ linked to another disk is the
        # project's own
        written = Path(spec.run)
        if written.is_absolute():
            why = f"{spec.run} is an absolute path"
        elif ".." in Path(os.path.normpath(written)).parts:
            why = f"{spec.run} lies outside the project root"
        elif not (root / written / "ledger.jsonl").is_file():
            why = f"{spec.run} holds no ledger.jsonl"
        else:
            continue
        problems.append(Problem(str(path), f"{field}[{index}].run", why, fix))
    return problems


def _family(operator: str) -> str:
    # The same family rule as the open-world escape table (harness.analysis.scoring).
    head = operator.split("/", 1)[0]
    return head if "/" in operator else head.split("-", 1)[0]


def in_benchmark(target: str, benchmark: str) -> bool:
    """`target` is `benchmark` itself or one of its targets (`bfcl` holds bfcl-message)."""
    return target == benchmark or target.startswith(benchmark + "-")


def prediction_problems(plan: Plan, file: str) -> list[Problem]:
    """A prediction whose key names nothing the plan draws could never be scored."""
    closed = sorted({op for a in plan.arms if a.kind is Arm.CLOSED_WORLD for op in a.operators})
    opened = sorted({op for a in plan.arms if a.kind is Arm.OPEN_WORLD for op in a.operators})
    families = sorted({f"{_family(op)}/*" for op in opened})
    problems = []
    for key in plan.predictions.recall_floor:
        if key != POOLED_KEY and key not in closed:
            problems.append(
                Problem(
                    file,
                    f"predictions.recall_floor.{key}",
                    f"no closed-world arm draws operator {key!r}",
                    "name one of " + ", ".join([*closed, POOLED_KEY]),
                )
            )
    for bench, floors in plan.predictions.benchmark_recall_floor.items():
        drawn = sorted(
            {
                op
                for a in plan.arms
                if a.kind is Arm.CLOSED_WORLD and any(in_benchmark(t, bench) for t in a.targets)
                for op in a.operators
            }
        )
        if not drawn:
            problems.append(
                Problem(
                    file,
                    f"predictions.benchmark_recall_floor.{bench}",
                    f"no closed-world arm draws from a target of benchmark {bench!r}",
                    "name a target, or the prefix before `-` of target names, that a "
                    "closed-world arm draws from",
                )
            )
            continue
        for key in floors:
            if key != POOLED_KEY and key not in drawn:
                problems.append(
                    Problem(
                        file,
                        f"predictions.benchmark_recall_floor.{bench}.{key}",
                        f"no closed-world arm of benchmark {bench!r} draws operator {key!r}",
                        "name one of " + ", ".join([*drawn, POOLED_KEY]),
                    )
                )
    closed_targets = {t for a in plan.arms if a.kind is Arm.CLOSED_WORLD for t in a.targets}
    benchmarks = sorted({benchmark_of(t) for t in closed_targets if "-" in t})
    arm_scopes = _drawn_scopes(plan)
    for field, i, spec in _compared(plan):
        # better_than: any scope of the closed-world pairs; same_as: one an arm draws from
        if isinstance(spec, BetterThan) and "scopes" not in spec.model_fields_set:
            continue  # the default (toy, real, pooled): a scope without pairs is untested
        if isinstance(spec, BetterThan):
            kinds = [
                scope
                for scope, drawn in (
                    ("toy", TOY_TARGET in closed_targets),
                    ("real", any(t != TOY_TARGET for t in closed_targets)),
                )
                if drawn
            ]
            choices = [*kinds, "pooled", *benchmarks]
            what = "no scope of the plan's closed-world pairs"
        else:
            choices, what = arm_scopes, "no scope an arm of the plan draws from"
        for scope in spec.scopes:
            if scope not in choices:
                problems.append(
                    Problem(
                        file,
                        f"{field}.{i}.scopes",
                        f"{scope!r} is {what}",
                        "name one of " + ", ".join(choices),
                    )
                )
    for key in plan.predictions.escape_rate_ceiling:
        if not opened or (key != POOLED_KEY and key not in opened and key not in families):
            choices = [*opened, *families, POOLED_KEY] if opened else []
            problems.append(
                Problem(
                    file,
                    f"predictions.escape_rate_ceiling.{key}",
                    f"no open-world arm draws operator {key!r}",
                    "name one of " + ", ".join(choices)
                    if choices
                    else "add an open_world arm or remove the ceiling",
                )
            )
    return problems


def benchmark_of(target: str) -> str:
    """The benchmark a target belongs to: the name before its first `-` (tau2-retail ->
    tau2), the toy domain its own."""
    return target.split("-", 1)[0]


def _drawn_scopes(plan: Plan) -> list[str]:
    """The scopes the plan's arms draw from, of every kind, as the shared pairs of a
    `same_as` are split (`harness.analysis.same_as`): toy, real, each real benchmark (the
    name before the first `-`), pooled."""
    targets = plan.targets()
    real = [t for t in targets if t != TOY_TARGET]
    return [
        *(["toy"] if TOY_TARGET in targets else []),
        *(["real"] if real else []),
        *sorted({benchmark_of(t) for t in real}),
        "pooled",
    ]


def no_file_in_the_way(root: Path, folder: str, *below: str) -> None:
    """Refuse, before any work, what is not a folder where the project's `folder`
    (mutants/, results/) or a folder under it (`below`: the plan's, the run's) must be: a
    file, a link to nothing, or under `folder` a link at all (the harness replaces a drawn
    corpus by renaming and does not follow links inside results/). Writing there would fail
    with a traceback once the work was done. `folder` itself may link to a folder, on
    another disk say."""
    path = root
    for part in (folder, *below):
        path = path / part
        if path.is_symlink() and (path != root / folder or not path.exists()):
            exists = path.exists()
            message = "is a symbolic link" if exists else "is a link that leads to no folder"
            where = f"; the harness does not follow links inside {folder}/" if exists else ""
            fix = "replace the link with the folder itself, or remove it"
        elif path.exists() and not path.is_dir():
            message, where, fix = "is a file", "", "move it away"
        else:
            continue
        field = str(path.relative_to(root))
        raise UserError(Problem(str(path), field, f"{message}, where a folder goes{where}", fix))


def project_root(plan_path: Path) -> Path:
    """The folder holding plans/, mutants/, controls/ and results/."""
    resolved = plan_path.resolve()
    if resolved.parent.name != "plans":
        raise UserError(
            Problem(
                str(plan_path),
                "path",
                "a plan must live in a folder named plans/",
                "move it to <project>/plans/",
            )
        )
    return resolved.parent.parent

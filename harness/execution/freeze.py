"""Freezes: SHA-256 of every input a run's numbers depend on, recorded before the run.

Groups: the plan file, the checker's scope files, the contracts, the target's source
files (its tools' whole package: code and the data its grader reads) and package versions,
the harness code that reads contracts and scores pairs, the drawn corpus (pool, manifest,
diffs), the screening rule with the source of `harness.mutation.screen`, and the negative
controls; since schema 2 also the versions of the packages the checker's behaviour depends
on (pydantic, PyYAML, and what each target's adapter names). Which installed files:
`harness.execution.scope`. The freeze id is the hash of all of it. `harness freeze` writes
`plans/<plan>.freeze.json` and commits nothing: it prints the git commands that commit the
record and tag it. The commit order in `git log` (`harness.execution.history`), not the
tag, shows that a freeze came before its results; a freeze whose id already has results is
refused.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import inspect
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.errors import Problem, UserError, read_json_model
from harness.execution.draw import Corpus, check_as_drawn, corpus_dir, load_corpus
from harness.execution.held_out import blind_predecessor, check_held_out
from harness.execution.plan import Plan
from harness.execution.recorded_calls import corpora_hashes, corpus_split
from harness.execution.scope import FileReads, harness_files, tool_files
from harness.targets.adapter import PackageVersions
from harness.targets.registry import load_target

# 2: package_versions. Records of schema 1 (no package versions) are read as they are.
FREEZE_SCHEMA_VERSION = 2
# The distributions the checker itself runs on: contract parsing (PyYAML) and every record
# (pydantic). Targets add theirs through the optional `PackageVersions` adapter protocol.
CHECKER_PACKAGES = ("pydantic", "PyYAML")


class PreviousFreeze(BaseModel):
    model_config = ConfigDict(extra="forbid")
    freeze_id: str
    used_pairs: list[str]


class FreezeRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = FREEZE_SCHEMA_VERSION
    plan: str
    freeze_id: str
    created_at: str
    checker: str
    hashes: dict[str, dict[str, str]] = Field(description="group -> path -> sha256")
    target_versions: dict[str, str]
    used_pairs: list[str]
    previous: list[PreviousFreeze] = Field(default_factory=list)
    package_versions: dict[str, str] | None = Field(
        default=None,
        description="distribution -> version the checker's behaviour depends on; "
        "None in a schema-1 record, which did not record them",
    )
    corpus_split: dict[str, dict[str, list[str]]] | None = Field(
        default=None,
        description="target -> {liveness: tasks, probe: tasks}: the split of the recorded-call "
        "corpora (plan `recorded_calls:`), whose files the `corpora` group hashes; None "
        "without recorded calls",
    )
    blind_as_of: str | None = Field(
        default=None,
        description="a refreeze of a plan with held_out whose held-out targets have been "
        "seen since: the earlier freeze, committed before any of their rows, that froze all "
        "this one does but the harness's code (harness.execution.held_out); None otherwise",
    )

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: object) -> object:
        """Schema 1 had no package versions: read it unchanged, never rewrite it."""
        if (
            isinstance(data, dict)
            and data.get("schema_version") == 1
            and "package_versions" in data
        ):
            raise ValueError("package_versions needs schema_version 2")
        return data

    def all_used(self) -> set[str]:
        return set(self.used_pairs).union(*(p.used_pairs for p in self.previous))


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(folder: Path, pattern: str = "*") -> list[Path]:
    return sorted(p for p in folder.rglob(pattern) if p.is_file() and "__pycache__" not in p.parts)


def _rel(path: Path, base: Path, reads: FileReads | None = None) -> str:
    """`path` relative to `base`; a path outside it would tie the record to one machine."""
    reads = reads or FileReads()
    resolved, resolved_base = reads.resolve(path), reads.resolve(base)
    if not resolved.is_relative_to(resolved_base):
        raise UserError(
            Problem(
                str(path),
                "freeze",
                f"lies outside {base}, so its hash could not be checked in another clone",
                "keep it under that folder",
            )
        )
    return resolved.relative_to(resolved_base).as_posix()


def checker_for(plan: Plan, name: str | None = None):  # -> Checker
    """The plan's checker, or the frozen comparison checker `name`."""
    from harness.checker_registry import resolve_checker  # here: execution depends on checkers

    return resolve_checker(name or plan.checker, seed=plan.checker_seed)


def run_checker(plan: Plan, name: str | None, freeze_id: str, post_hoc: bool, allow_post_hoc: bool):
    """(checker, freeze id, run id, post hoc) for `harness run [--checker NAME]`. The plan's
    checker runs into the folder named by the freeze id; a comparison checker (frozen with
    the plan) into `<freeze id>.<checker name>`; any other checker only with --post-hoc
    (`allow_post_hoc`), which then marks every row post hoc."""
    checker = checker_for(plan, name)
    if name is None or name == plan.checker:
        return checker, freeze_id, freeze_id, post_hoc
    if name not in plan.comparison_checkers:
        if not allow_post_hoc:
            raise UserError(
                Problem(
                    name,
                    "--checker",
                    f"is not frozen with plan {plan.name} (its checkers: "
                    f"{', '.join([plan.checker, *plan.comparison_checkers])})",
                    "add it to the plan's comparison_checkers and draw --refreeze + freeze, "
                    "or pass --post-hoc",
                )
            )
        post_hoc = True
        if not freeze_id.startswith("posthoc-"):
            freeze_id = f"posthoc-{freeze_id}"
    return checker, freeze_id, f"{freeze_id}.{checker.name}", post_hoc


def _scope_hashes(checker, reads: FileReads) -> dict[str, str]:
    scope = checker.scope_files()
    # keyed from the parent of the scope's common folder: harness/checker/dynamic.py for the
    # reference checker, the same shape for a checker installed anywhere else
    scope_base = Path(os.path.commonpath([reads.resolve(p).parent for p in scope])).parent
    return {_rel(p, scope_base, reads): reads.sha256(p) for p in scope}


def current_inputs(
    plan_path: Path, plan: Plan, root: Path
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(hashes by group, target versions) as the inputs are now."""
    hashes: dict[str, dict[str, str]] = {}
    hashes["plan"] = {_rel(plan_path, root): sha256_file(plan_path)}
    reads = FileReads()  # each installed file read once, however many targets name it
    installed, versions = installed_inputs(plan, reads)
    hashes.update(installed)
    corpus = corpus_dir(root, plan)
    if not (corpus / "manifest.json").exists():
        raise UserError(
            Problem(
                str(corpus),
                "corpus",
                "nothing drawn yet",
                f"run `harness draw {_rel(plan_path, root)}` first",
            )
        )
    hashes["corpus"] = {_rel(p, root, reads): reads.sha256(p) for p in _files(corpus)}
    # the screening rule, and the code that implements it: a change of either is a new
    # freeze, so what the draw could not draw cannot change silently
    from harness.mutation import screen

    hashes["screening"] = {f"rule:{plan.screening.rule}": sha256_file(Path(screen.__file__))}
    if plan.recorded_calls is not None:  # the corpora the drawn halves came from
        hashes["corpora"] = corpora_hashes(plan, root)
    controls = root / "controls"
    ids = {c.id for c in plan.negative_controls}
    hashes["controls"] = (
        {_rel(p, root): sha256_file(p) for p in _files(controls) if p.stem in ids}
        if controls.exists()
        else {}
    )
    return hashes, versions


# the rest: installed_inputs
PROJECT_GROUPS = frozenset({"plan", "corpus", "screening", "controls", "corpora"})


def installed_part(hashes: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The groups of `current_inputs` that `installed_inputs` computes."""
    return {group: h for group, h in hashes.items() if group not in PROJECT_GROUPS}


def package_versions(plan: Plan) -> dict[str, str]:
    """Installed versions of CHECKER_PACKAGES and of every package a target's adapter
    names (`PackageVersions`); a distribution not installed reads "not installed"."""
    names = set(CHECKER_PACKAGES)
    for name in plan.targets():
        adapter = load_target(name).adapter
        if isinstance(adapter, PackageVersions):
            names.update(adapter.package_versions())
    versions = {}
    for name in sorted(names, key=str.lower):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def installed_inputs(
    plan: Plan, reads: FileReads | None = None
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(hashes of checker_scope[:NAME], contracts, target_source and harness; target
    versions): what the installed packages of this interpreter hold, the part of a freeze a
    remote worker can check for itself. Which files: `harness.execution.scope`; each read
    once (`reads`) however many targets share its package."""
    reads = reads or FileReads()
    hashes: dict[str, dict[str, str]] = {}
    checkers = [checker_for(plan), *(checker_for(plan, n) for n in plan.comparison_checkers)]
    hashes["checker_scope"] = _scope_hashes(checkers[0], reads)
    for name, checker in zip(plan.comparison_checkers, checkers[1:], strict=True):
        hashes[f"checker_scope:{name}"] = _scope_hashes(checker, reads)  # `--checker`
    hashes["contracts"] = {}
    hashes["target_source"] = {}
    versions: dict[str, str] = {}
    for name in plan.targets():
        target = load_target(name)
        adapter = target.adapter
        versions[name] = adapter.version()
        source_root = adapter.source_root()
        for path in _files(adapter.contracts_dir(), "*.y*ml"):
            # keyed relative to the contracts folder: a path in a freeze record must mean the
            # same file in every clone and every installation
            key = f"{name}:{_rel(path, adapter.contracts_dir(), reads)}"
            hashes["contracts"][key] = reads.sha256(path)
        # the tools' whole top-level package: what the grader arm replays lives beside them
        # one walk per top-level package, not one per tool (tau2's 68 tools share one)
        tops = {adapter.tool_function(t).__module__.split(".", 1)[0] for t in adapter.tool_names()}
        skip = [adapter.contracts_dir()]
        files = {path for top in tops for path in tool_files(top, skip, reads)}
        # the adapter decides what the checker observes and how the grader replays: it is
        # part of the target, with the modules of its own package (a grader, task loaders)
        for relative, adapter_file in adapter_files(type(adapter)).items():
            hashes["target_source"][f"{name}:adapter:{relative}"] = reads.sha256(adapter_file)
        for path in sorted(files):
            hashes["target_source"][f"{name}:{_rel(path, source_root, reads)}"] = reads.sha256(path)
    scopes = [p for c in checkers for p in c.scope_files()]
    harness = harness_files(scopes, reads)
    hashes["harness"] = {key: reads.sha256(path) for key, path in harness.items()}
    return hashes, versions


def adapter_files(adapter_class: type) -> dict[str, Path]:
    """By path relative to its folder, the adapter's module file and the modules of its own
    package that it imports, directly or through one another, read from their source (not
    from whatever happens to be loaded): BFCL's and tau2's graders and task loaders sit
    beside their adapters, and what they replay decides `grader_caught` as much as the
    adapter decides what is observed. Importing a module runs every package `__init__.py`
    on its way, so those count, and what they import. A module beside it that none of them
    imports (a development script, a test) is not part of it, nor one loaded only by a name
    built at run time (`importlib.import_module`), nor anything of `harness.targets`
    itself, whose modules every target shares. An adapter with no source file (defined in
    an interactive session) has none."""
    try:
        source = inspect.getsourcefile(adapter_class)
    except (TypeError, OSError):  # no module file at all, or its source is gone
        source = None
    if source is None:
        return {}
    module_file = Path(source)
    module = adapter_class.__module__
    package = module if module_file.name == "__init__.py" else module.rpartition(".")[0]
    folder = module_file.parent
    if package in ("", "harness.targets") or not (folder / "__init__.py").is_file():
        return {module_file.name: module_file}
    found: set[Path] = set()
    todo = [module_file, folder / "__init__.py"]
    while todo:
        path = todo.pop()
        if path in found:
            continue
        found.add(path)
        for name in _imported(path, package, folder):
            if not name.startswith(package + "."):
                continue
            parts = name[len(package) + 1 :].split(".")
            for depth in range(1, len(parts) + 1):  # pkg.a.b runs pkg/a/__init__.py first
                stem = folder.joinpath(*parts[:depth])
                todo += [c for c in (stem.with_suffix(".py"), stem / "__init__.py") if c.is_file()]
    return {path.relative_to(folder).as_posix(): path for path in sorted(found)}


def _imported(path: Path, package: str, folder: Path) -> list[str]:
    """The absolute names a module's import statements (anywhere in it) may load: for `from
    m import x`, both m and m.x; relative imports resolved against the module's package."""
    relative = path.relative_to(folder).with_suffix("").parts
    here = [*package.split("."), *relative[:-1]]  # the package that holds `path`
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except SyntaxError as exc:
        raise UserError(
            Problem(
                str(path),
                f"line {exc.lineno}",
                f"a module of the adapter's package does not parse ({exc.msg}), so the "
                "freeze cannot tell what the adapter imports",
                "fix the module, or move it out of the adapter's package",
            )
        ) from None
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names += [module, *(f"{module}.{alias.name}" for alias in node.names)]
    return names


def freeze_id_of(
    hashes: dict[str, dict[str, str]],
    versions: dict[str, str],
    checker: str,
    packages: dict[str, str] | None = None,
) -> str:
    """The freeze id; `packages` is part of it from schema 2 on (a schema-1 id is left as
    it was computed)."""
    material: dict[str, object] = {"hashes": hashes, "versions": versions, "checker": checker}
    if packages is not None:
        material["packages"] = packages
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


def record_path(root: Path, plan: Plan | str) -> Path:
    name = plan if isinstance(plan, str) else plan.name
    return root / "plans" / f"{name}.freeze.json"


def read_record(root: Path, plan: Plan) -> FreezeRecord | None:
    path = record_path(root, plan)
    if not path.exists():
        return None
    if not path.is_file():  # freezing again would read it the same way
        raise UserError(
            Problem(
                str(path), "file", "is not a file, where the freeze record goes", "move it away"
            )
        )
    return read_json_model(
        path, FreezeRecord, f"restore it from git (`git checkout -- {path}`), or freeze again"
    )


def existing_results(root: Path, plan: Plan, freeze_id: str) -> list[Path]:
    """Run folders of `freeze_id` (any checker), local or published."""
    found: list[Path] = []
    for folder in (root / "results" / plan.name, root / "results" / "reference" / plan.name):
        if folder.is_dir():
            found += sorted(folder.glob(f"{freeze_id}*"))
    return found


def freeze(
    plan_path: Path,
    plan: Plan,
    root: Path,
    used_pairs: list[str],
    *,
    corpus: Corpus | None = None,
    check: Callable[[Corpus], None] | None = None,
) -> FreezeRecord:
    """Write the freeze record; refused when results of its id already exist (a freeze
    made after its results proves nothing), when a committed ledger holds a pair of a
    held-out target, or when the plan's draw is no longer as drawn (`check_as_drawn`).
    `corpus` is the drawn corpus when the caller has read it already (read here
    otherwise); `check` (the predictions' decidability, `harness freeze`) may refuse the
    freeze after the draw is found as drawn and before anything is hashed."""
    if corpus is None and (corpus_dir(root, plan) / "manifest.json").exists():
        corpus = load_corpus(root, plan)
    if corpus is not None:
        check_as_drawn(plan_path, plan, root, corpus)
        if check is not None:
            check(corpus)
    hashes, versions = current_inputs(plan_path, plan, root)
    checker = checker_for(plan)
    checker_name = f"{checker.name} {checker.version}"
    packages = package_versions(plan)
    new_id = freeze_id_of(hashes, versions, checker_name, packages)
    blind_as_of = None
    try:
        check_held_out(root, _rel(plan_path, root), plan.held_out, "HEAD", "this freeze")
    except UserError:
        # a refreeze of what an earlier blind freeze froze, the harness's code aside
        this = {
            "plan": plan.name,
            "freeze_id": new_id,
            "checker": checker_name,
            "hashes": hashes,
            "target_versions": versions,
            "package_versions": packages,
        }
        blind_as_of = blind_predecessor(root, record_path(root, plan), this, plan.held_out, "HEAD")
        if blind_as_of is None:
            raise
    results = existing_results(root, plan, new_id)
    if results:
        raise UserError(
            Problem(
                _rel(results[0], root),
                "freeze",
                f"results of freeze {new_id} already exist, so this freeze would not come "
                "before its results",
                "change an input and draw anew (harness draw --refreeze), or remove the "
                "results if they were never published",
            )
        )
    old = read_record(root, plan)
    previous = list(old.previous) if old else []
    if old and old.freeze_id != new_id:
        previous.append(PreviousFreeze(freeze_id=old.freeze_id, used_pairs=old.used_pairs))
    record = FreezeRecord(
        plan=plan.name,
        freeze_id=new_id,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        checker=checker_name,
        hashes=hashes,
        target_versions=versions,
        used_pairs=sorted(used_pairs),
        previous=previous,
        package_versions=packages,
        corpus_split=corpus_split(plan, root) if plan.recorded_calls is not None else None,
        blind_as_of=blind_as_of,
    )
    path = record_path(root, plan)
    from harness.execution.atomic import write_text

    # records as before when a field is not used
    left_out = {f for f in ("corpus_split", "blind_as_of") if getattr(record, f) is None} or None
    write_text(path, record.model_dump_json(indent=1, exclude=left_out) + "\n")  # whole
    return record


def commit_commands(root: Path, plan_path: Path, record: FreezeRecord) -> list[str]:
    """The git commands that commit the freeze record (with the plan and its drawn corpus)
    and tag it; `harness freeze` prints them and runs none."""
    paths = [
        _rel(plan_path, root),
        _rel(record_path(root, record.plan), root),
        f"mutants/{record.plan}",
    ]
    if (root / "controls").is_dir():
        paths.append("controls")
    paths += sorted(record.hashes.get("corpora", {}))  # the recorded-call corpora it used
    return [
        "git add " + " ".join(paths),
        f'git commit -m "freeze {record.freeze_id} of plan {record.plan}"',
        f'git tag -a freeze/{record.plan}/{record.freeze_id} -m "freeze {record.freeze_id} '
        f'of plan {record.plan}"',
    ]


def verify(plan_path: Path, plan: Plan, root: Path) -> tuple[FreezeRecord, list[Problem]]:
    """The record and what differs from it now (empty: the freeze holds)."""
    return verified_inputs(plan_path, plan, root).record_and_problems


@dataclass(frozen=True)
class Verification:
    """A freeze record, what differs from it now, and the current inputs it was checked
    against (so a caller needs not load the targets again)."""

    record: FreezeRecord
    problems: list[Problem]
    hashes: dict[str, dict[str, str]]
    versions: dict[str, str]
    packages: dict[str, str]  # installed versions of the record's (or today's) packages
    # a package whose version differs from the freeze: a warning, refused under --strict
    package_problems: list[Problem]

    @property
    def record_and_problems(self) -> tuple[FreezeRecord, list[Problem]]:
        return self.record, self.problems


def verified_inputs(plan_path: Path, plan: Plan, root: Path) -> Verification:
    """`verify`, keeping the current hashes and target versions."""
    record = read_record(root, plan)
    if record is None:
        raise UserError(
            Problem(
                str(record_path(root, plan)),
                "freeze",
                "the plan is not frozen",
                f"run `harness draw` and `harness freeze {_rel(plan_path, root)}`",
            )
        )
    hashes, versions = current_inputs(plan_path, plan, root)
    fix = "revert it; or draw anew (harness draw --refreeze) and freeze; or run with --post-hoc"
    problems: list[Problem] = []
    for group in sorted(set(record.hashes) | set(hashes)):
        then, now = record.hashes.get(group, {}), hashes.get(group, {})
        for path in sorted(set(then) | set(now)):
            if path not in now:
                problems.append(
                    Problem(path, group, f"missing since freeze {record.freeze_id}", fix)
                )
            elif path not in then:
                problems.append(Problem(path, group, f"added since freeze {record.freeze_id}", fix))
            elif then[path] != now[path]:
                problems.append(
                    Problem(path, group, f"changed since freeze {record.freeze_id}", fix)
                )
    for name in sorted(set(record.target_versions) | set(versions)):
        if record.target_versions.get(name) != versions.get(name):
            problems.append(
                Problem(
                    name,
                    "target_versions",
                    f"version {versions.get(name)} differs from the frozen "
                    f"{record.target_versions.get(name)}",
                    fix,
                )
            )
    packages = package_versions(plan)
    return Verification(
        record, problems, hashes, versions, packages, package_problems(record, packages)
    )


def package_problems(record: FreezeRecord, packages: dict[str, str]) -> list[Problem]:
    """One problem per package whose installed version differs from the frozen one (none
    for a schema-1 record, which recorded no versions)."""
    if record.package_versions is None:
        return []
    problems = []
    for name in sorted(set(record.package_versions) | set(packages), key=str.lower):
        then, now = record.package_versions.get(name), packages.get(name)
        if then != now:
            problems.append(
                Problem(
                    name,
                    "package_versions",
                    f"installed {now or 'not recorded'} differs from {then or 'nothing'} "
                    f"recorded in freeze {record.freeze_id}",
                    f"install {name}=={then}" if then else "freeze anew with it installed",
                )
            )
    return problems

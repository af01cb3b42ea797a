"""What a freeze hashes besides the plan, corpus and controls: the installed code and data
that can change a ledger row. The rule (docs/ledger.md, "What the freeze covers"):

- `checker_scope[:NAME]`: the files each checker of the plan names (`scope_files`).
- `contracts`: every contract file of every target.
- `target_source`: every code or data file (`DATA_SUFFIXES`) of the top-level package that
  holds a target's tools, outside its contracts folder, and the adapter's module with the
  modules of its own package that it imports (`freeze.adapter_files`). For
  AgentDojo that is the whole `agentdojo` package: the tools, and what the grader arm
  replays (task definitions, ground truths, utility functions, environment YAML).
- `harness`: every module of the installed `harness` package that runs while a pair is
  scored or a contract is read (loading and compiling contracts and predicates, drawing
  and applying mutants, adapters and graders, the runner, executors and ledger, the freeze
  itself), that is, all of it but `PRESENTATION` (what only reads a finished ledger or
  talks to the user), `OTHER_CHECKERS` (code only a checker other than the reference one
  runs: in that checker's scope when the plan names it) and the files already in a checker
  scope.

Left out, because no row depends on them: documentation, the tests, the analysis and
rendering of finished ledgers, caches (`__pycache__`).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

# .gz since the eleventh refreeze: tau2's airline and retail databases (what every tau2 tool
# starts from) and telecom's tasks ship as db.json.gz / tasks.json.gz
DATA_SUFFIXES = frozenset(
    {".py", ".pyi", ".yaml", ".yml", ".json", ".jsonl", ".csv", ".toml", ".gz"}
)
# harness modules that never run while a pair is scored: they read finished ledgers, print,
# or write new files for a person to edit
PRESENTATION = (
    "harness/__main__.py",
    "harness/analysis/",
    "harness/cli.py",
    "harness/execution/progress.py",
    "harness/execution/publish.py",
    "harness/scaffold.py",
)
# harness code that runs only inside a shipped checker other than the reference one (the
# static scanner): hashed in `checker_scope:NAME` of a plan that names that checker, so an
# edit to it is not a new freeze of the reference checker
OTHER_CHECKERS = ("harness/scanner/",)


def _package_folder(module: ModuleType) -> Path:
    if getattr(module, "__file__", None):
        return Path(module.__file__ or ".").resolve().parent
    return Path(next(iter(module.__path__))).resolve()  # a namespace package


class FileReads:
    """One computation's reads of the file system: each folder walked, each path resolved and
    each file hashed once, however many targets share them (AgentDojo's four suites hash one
    `agentdojo` package, tau2's three domains one `inspect_evals`: walked and hashed once per
    target, they were most of a freeze's verification). Made anew for each computation of a
    freeze's inputs and never kept after it, so a file changed between two is read again."""

    def __init__(self) -> None:
        self._walks: dict[Path, list[Path]] = {}
        self._resolved: dict[Path, Path] = {}
        self._digests: dict[Path, str] = {}

    def resolve(self, path: Path) -> Path:
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = path.resolve()
        return found

    def sha256(self, path: Path) -> str:
        """The SHA-256 of the file's bytes, as `freeze.sha256_file`."""
        key = self.resolve(path)
        found = self._digests.get(key)
        if found is None:
            found = self._digests[key] = hashlib.sha256(key.read_bytes()).hexdigest()
        return found

    def walk(self, folder: Path) -> list[Path]:
        """Code and data files under `folder`, sorted, without caches."""
        found = self._walks.get(folder)
        if found is None:
            found = self._walks[folder] = sorted(
                p
                for p in folder.rglob("*")
                if p.suffix in DATA_SUFFIXES  # the cheap tests first: most files fail them
                and "__pycache__" not in p.parts
                and p.is_file()
            )
        return found


def tool_files(
    module_name: str, skip: Iterable[Path] = (), reads: FileReads | None = None
) -> list[Path]:
    """The `target_source` files of a tool module: its top-level package's code and data
    (without the folders `skip`), or the module alone when it is not in a package."""
    import importlib

    top = module_name.split(".", 1)[0]
    module = sys.modules.get(top) or importlib.import_module(top)
    if not hasattr(module, "__path__"):  # a top-level module: never its whole site-packages
        return [Path(module.__file__ or ".").resolve()]
    return package_files(_package_folder(module), skip, reads)


def package_files(
    folder: Path, skip: Iterable[Path] = (), reads: FileReads | None = None
) -> list[Path]:
    """Code and data files under `folder`, sorted, without caches or the folders `skip`."""
    reads = reads or FileReads()
    skipped = [reads.resolve(s) for s in skip]
    return [
        p
        for p in reads.walk(folder)
        if not (skipped and any(reads.resolve(p).is_relative_to(s) for s in skipped))
    ]


def harness_files(
    checker_scopes: Iterable[Path], reads: FileReads | None = None
) -> dict[str, Path]:
    """The `harness` group: key (`harness/...`, relative to the package's parent) -> file."""
    import harness

    reads = reads or FileReads()
    folder = _package_folder(harness)
    in_scope = {reads.resolve(p) for p in checker_scopes}
    out: dict[str, Path] = {}
    for path in package_files(folder, (), reads):
        if path.suffix != ".py" or reads.resolve(path) in in_scope:
            continue  # contracts (.yaml) are hashed in their own group
        key = reads.resolve(path).relative_to(folder.parent).as_posix()
        if not key.startswith(PRESENTATION + OTHER_CHECKERS):
            out[key] = path
    return out

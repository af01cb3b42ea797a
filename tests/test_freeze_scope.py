"""What the freeze covers (harness.execution.scope, docs/ledger.md): tampering with one file
of each kind, always in a copy on PYTHONPATH, never in the installed packages."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_runner import project

import harness

INPUTS = textwrap.dedent(
    """
    import json, sys
    from harness.execution.freeze import installed_inputs
    from harness.execution.plan import ArmSpec, Plan

    arm = ArmSpec(name="a", kind="closed_world", target=sys.argv[1], operators=["M-PHANTOM"],
                  draw_per_operator=1)
    plan = Plan(name="p", description="scope", seed=0, arms=[arm])
    hashes, _ = installed_inputs(plan)
    print(json.dumps(hashes))
    """
)


def run(*args: str, cwd: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,  # never the checkout: `python -m` puts the cwd first on sys.path
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def hashes_with(site: Path, target: str, cwd: Path) -> dict[str, dict[str, str]]:
    done = run("-c", INPUTS, target, cwd=cwd, site=site)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def changed(before: dict, after: dict) -> set[tuple[str, str]]:
    return {
        (group, key)
        for group in before.keys() | after.keys()
        for key in before.get(group, {}).keys() | after.get(group, {}).keys()
        if before.get(group, {}).get(key) != after.get(group, {}).get(key)
    }


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_the_harness_code_that_reads_contracts_and_scores_pairs_is_frozen(tmp_path):
    site = tmp_path / "site"
    package = Path(harness.__file__).parent
    shutil.copytree(package, site / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    root = project(tmp_path, per_operator=1)
    for command in ("draw", "freeze"):
        done = run("-m", "harness", command, "plans/small.yaml", cwd=root, site=site)
        assert done.returncode == 0, done.stderr
    append(site / "harness" / "contracts" / "loader.py", "# how contracts are read\n")
    append(site / "harness" / "execution" / "runner.py", "# how a pair is scored\n")
    append(site / "harness" / "analysis" / "tables" / "build.py", "# presentation only\n")
    refused = run("-m", "harness", "run", "plans/small.yaml", cwd=root, site=site)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = " ".join(refused.stderr.split())
    assert "harness/contracts/loader.py: harness: changed since freeze" in said
    assert "harness/execution/runner.py: harness: changed since freeze" in said
    assert "build.py" not in said  # rendering a finished ledger changes no row
    assert not (root / "results").exists()


def test_the_benchmark_files_the_grader_arm_reads_are_frozen(tmp_path):
    pytest.importorskip("agentdojo")
    import agentdojo

    installed = Path(agentdojo.__file__).parent
    tasks = Path("default_suites/v1/banking/user_tasks.py")
    environment = Path("data/suites/banking/environment.yaml")
    untouched = {
        p: hashlib.sha256((installed / p).read_bytes()).hexdigest() for p in (tasks, environment)
    }
    site = tmp_path / "site"
    shutil.copytree(installed, site / "agentdojo", ignore=shutil.ignore_patterns("__pycache__"))
    before = hashes_with(site, "agentdojo-banking", tmp_path)
    append(site / "agentdojo" / tasks, "# a ground truth edited\n")
    append(site / "agentdojo" / environment, "# environment data edited\n")
    after = hashes_with(site, "agentdojo-banking", tmp_path)
    assert changed(before, after) == {
        ("target_source", f"agentdojo-banking:agentdojo/{tasks.as_posix()}"),
        ("target_source", f"agentdojo-banking:agentdojo/{environment.as_posix()}"),
    }
    # the installed package is byte-identical: only the copy was touched
    assert untouched == {
        p: hashlib.sha256((installed / p).read_bytes()).hexdigest() for p in (tasks, environment)
    }


FREEZE_ID = textwrap.dedent(
    """
    import json, sys
    from harness.execution.freeze import freeze_id_of, installed_inputs
    from harness.execution.plan import ArmSpec, Plan

    arm = ArmSpec(name="a", kind="closed_world", target="toy_domain", operators=["M-PHANTOM"],
                  draw_per_operator=1)
    plan = Plan(name="p", description="scope", seed=0, arms=[arm],
                comparison_checkers=sys.argv[1:])
    hashes, versions = installed_inputs(plan)
    print(json.dumps({"id": freeze_id_of(hashes, versions, plan.checker), "hashes": hashes}))
    """
)


def test_editing_the_scanner_is_not_a_new_freeze_of_the_reference_checker(tmp_path):
    site = tmp_path / "site"
    package = Path(harness.__file__).parent
    shutil.copytree(package, site / "harness", ignore=shutil.ignore_patterns("__pycache__"))

    def freeze(*comparison: str) -> dict:
        done = run("-c", FREEZE_ID, *comparison, cwd=tmp_path, site=site)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    before, before_static = freeze(), freeze("static-scanner")
    append(site / "harness" / "scanner" / "__init__.py", "# a scanner check edited\n")
    after, after_static = freeze(), freeze("static-scanner")
    assert after["id"] == before["id"]
    assert not any("scanner" in key for key in before["hashes"]["checker_scope"])
    # the checker that runs the scanner is still a new freeze when the scanner changes
    assert after_static["id"] != before_static["id"]
    assert changed(before_static["hashes"], after_static["hashes"]) == {
        ("checker_scope:static-scanner", "harness/scanner/__init__.py")
    }


def test_targets_that_share_a_package_hash_it_as_each_would_alone():
    """Two AgentDojo suites share the `agentdojo` package: hashed once for both (one
    `FileReads`), each suite's groups are those it gets computed alone."""
    pytest.importorskip("agentdojo")
    from harness.execution.freeze import installed_inputs
    from harness.execution.plan import ArmSpec, Plan

    def plan(*targets: str) -> Plan:
        arms = [
            ArmSpec(
                name=t, kind="closed_world", target=t, operators=["M-PHANTOM"], draw_per_operator=1
            )
            for t in targets
        ]
        return Plan(name="p", description="scope", seed=0, arms=arms)

    both, _ = installed_inputs(plan("agentdojo-banking", "agentdojo-slack"))
    for target in ("agentdojo-banking", "agentdojo-slack"):
        alone, _ = installed_inputs(plan(target))
        for group in ("contracts", "target_source"):
            mine = {k: v for k, v in both[group].items() if k.startswith(f"{target}:")}
            assert mine == alone[group]
            assert len(mine) > 100 or group == "contracts"
        assert both["harness"] == alone["harness"]


def test_a_file_changed_between_two_computations_is_read_again(tmp_path):
    from harness.execution.scope import FileReads, package_files

    (tmp_path / "a.py").write_text("x = 1\n")
    reads = FileReads()
    first = reads.sha256(tmp_path / "a.py")
    assert first == hashlib.sha256(b"x = 1\n").hexdigest()
    assert package_files(tmp_path, (), reads) == [tmp_path / "a.py"]
    (tmp_path / "a.py").write_text("x = 2\n")
    (tmp_path / "b.yaml").write_text("b: 1\n")
    assert reads.sha256(tmp_path / "a.py") == first  # within one computation: read once
    assert package_files(tmp_path, (), reads) == [tmp_path / "a.py"]
    fresh = FileReads()  # the next computation reads the files as they are now
    assert fresh.sha256(tmp_path / "a.py") == hashlib.sha256(b"x = 2\n").hexdigest()
    assert package_files(tmp_path, (), fresh) == [tmp_path / "a.py", tmp_path / "b.yaml"]


def test_one_walk_serves_callers_that_skip_different_folders(tmp_path):
    """The walk is remembered by folder alone; each caller's skipped folders are applied to
    it afresh, so one target's contracts folder never leaves another target's files out."""
    from harness.execution.scope import FileReads, package_files

    for name in ("pkg/a.py", "pkg/contracts/one/c.yaml", "pkg/contracts/two/d.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    folder = tmp_path / "pkg"
    one, two = folder / "contracts" / "one", folder / "contracts" / "two"
    reads = FileReads()
    walked: list[Path] = []
    original = reads.walk

    def counted(path: Path) -> list[Path]:
        walked.append(path)
        return original(path)

    reads.walk = counted  # type: ignore[method-assign]
    assert package_files(folder, [one], reads) == [folder / "a.py", two / "d.yaml"]
    assert package_files(folder, [two], reads) == [folder / "a.py", one / "c.yaml"]
    assert package_files(folder, (), reads) == [folder / "a.py", one / "c.yaml", two / "d.yaml"]
    # the same answers as a fresh computation for each, from one walk of the folder
    for skip in ([one], [two], []):
        assert package_files(folder, skip, reads) == package_files(folder, skip)
    assert len(walked) == 6 and len(reads._walks) == 1


def test_an_adapters_own_package_is_part_of_the_target_it_adapts():
    """BFCL's grader decides `grader_caught` as its adapter decides what is observed: both
    are in the target's `target_source`, so editing either ends a held-out target's
    blindness; the toy adapter's folder is `harness.targets`, shared by every target, so
    only its own module counts."""
    pytest.importorskip("bfcl_eval")
    from harness.execution.freeze import installed_inputs
    from harness.execution.plan import ArmSpec, Plan

    arms = [
        ArmSpec(name=t, kind="closed_world", target=t, operators=["M-PHANTOM"], draw_per_operator=1)
        for t in ("bfcl-ticket", "toy_domain")
    ]
    hashes, _ = installed_inputs(Plan(name="p", description="scope", seed=0, arms=arms))
    adapters = {k for k in hashes["target_source"] if ":adapter:" in k}
    assert {"bfcl-ticket:adapter:adapter.py", "bfcl-ticket:adapter:grader.py"} <= adapters
    assert "bfcl-ticket:adapter:tasks.py" in adapters
    assert "bfcl-ticket:adapter:enumerate_tools.py" not in adapters  # a script none imports
    assert {k for k in adapters if k.startswith("toy_domain:")} == {"toy_domain:adapter:toy.py"}
    grader = Path(harness.__file__).parent / "targets" / "bfcl" / "grader.py"
    assert (
        hashes["target_source"]["bfcl-ticket:adapter:grader.py"]
        == hashlib.sha256(grader.read_bytes()).hexdigest()
    )


def test_an_adapters_package_counts_only_what_the_adapter_imports(tmp_path, monkeypatch):
    """Imports anywhere in the adapter (a method's own import), relative ones, each package
    `__init__.py` an import runs on its way and what those import, and the imports of the
    modules so found are followed; a module beside it that nothing imports (a test, a
    script) is left out, as is a module of another package; an adapter defined in its
    package's `__init__.py` has that package; a class with no source file has nothing to
    hash; a module that does not parse is a one-line error naming it."""
    from harness.errors import UserError
    from harness.execution.freeze import adapter_files

    def package(name: str, files: dict[str, str]) -> Path:
        root = tmp_path / name
        for relative, text in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text)
        return root

    plug = package(
        "myplug",
        {
            "__init__.py": "from .registry import REGISTRY\n",
            "registry.py": "REGISTRY = {}\n",
            "adapter.py": (
                "import json\nfrom . import helpers\n"
                "class A:\n    def grade(self):\n        from myplug.grading.grader import g\n"
            ),
            "helpers.py": "from .sub.loader import load\n",
            "sub/__init__.py": "from . import extra\n",
            "sub/extra.py": "",
            "sub/loader.py": "from ..registry import REGISTRY as load\n",
            "grading/__init__.py": "",
            "grading/grader.py": "def g():\n    return 1\n",
            "test_adapter.py": "from myplug.adapter import A\n",
            "script.py": "import myplug.helpers\n",
        },
    )
    package("inits", {"__init__.py": "from . import grader\nclass B:\n    pass\n", "grader.py": ""})
    package(
        "broken",
        {
            "__init__.py": "",
            "adapter.py": "class C:\n    def f(self):\n        import broken.bad\n",
        },
    )
    (tmp_path / "broken" / "bad.py").write_text("def (:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    found = adapter_files(importlib.import_module("myplug.adapter").A)
    assert list(found) == [
        "__init__.py",
        "adapter.py",
        "grading/__init__.py",
        "grading/grader.py",
        "helpers.py",
        "registry.py",
        "sub/__init__.py",
        "sub/extra.py",
        "sub/loader.py",
    ]
    assert found["sub/loader.py"] == plug / "sub" / "loader.py"
    assert list(adapter_files(importlib.import_module("inits").B)) == ["__init__.py", "grader.py"]
    assert adapter_files(type("Interactive", (), {"__module__": "not_a_module_anywhere"})) == {}
    with pytest.raises(UserError, match=r"broken/bad\.py: line 1: a module of the adapter's"):
        adapter_files(importlib.import_module("broken.adapter").C)


def test_a_benchmarks_compressed_data_is_frozen():
    """tau2's retail tools start from `db.json.gz`: a compressed database is data the tools
    read, hashed in the target's `target_source` like the JSON beside it."""
    pytest.importorskip("inspect_evals")
    import inspect_evals

    from harness.execution.freeze import installed_inputs
    from harness.execution.plan import ArmSpec, Plan

    arm = ArmSpec(
        name="r",
        kind="closed_world",
        target="tau2-retail",
        operators=["M-PHANTOM"],
        draw_per_operator=1,
    )
    hashes, _ = installed_inputs(Plan(name="p", description="scope", seed=0, arms=[arm]))
    database = Path(inspect_evals.__file__).parent / "tau2" / "data" / "domains" / "retail"
    key = "tau2-retail:inspect_evals/tau2/data/domains/retail/db.json.gz"
    assert (
        hashes["target_source"][key]
        == hashlib.sha256((database / "db.json.gz").read_bytes()).hexdigest()
    )

"""Bring your own benchmark and checker: entry points, `package.module:Name` references,
the static-scanner checker, draft clauses and the two scaffolds. `plugin_bench` (beside this
file) is a benchmark outside `harness/` that reaches the harness only through those."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml

from harness.checker import ReferenceChecker
from harness.checker_registry import resolve_checker
from harness.contracts.loader import read_yaml
from harness.contracts.model import Contract
from harness.errors import UserError
from harness.mutation.apply import applied
from harness.mutation.enumerate import enumerate_pairs
from harness.plugins import CHECKERS_GROUP, TARGETS_GROUP
from harness.scanner.as_checker import StaticScannerChecker
from harness.targets.adapter import Adapter
from harness.targets.registry import load_target

TESTS = Path(__file__).resolve().parent
PLUGIN = "plugin_bench.adapter:PluginBenchAdapter"


def distribution(folder: Path) -> Path:
    """A minimal installed distribution registering plugin_bench under the targets group."""
    info = folder / "plugin_bench_dist-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: plugin-bench-dist\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text(
        f"[{TARGETS_GROUP}]\nplugin_bench = {PLUGIN}\n"
        f"[{CHECKERS_GROUP}]\nbench-static = harness.scanner.as_checker:StaticScannerChecker\n"
    )
    return folder


def harness(*args: str, cwd: Path, paths: tuple[Path, ...] = ()) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [*map(str, paths), str(TESTS), *filter(None, [env.get("PYTHONPATH")])]
    )
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


# --- registration ------------------------------------------------------------------------------


def test_builtins_are_registered_as_entry_points() -> None:
    targets = {ep.name for ep in entry_points(group=TARGETS_GROUP)}
    checkers = {ep.name: ep.value for ep in entry_points(group=CHECKERS_GROUP)}
    assert {"toy_domain", "agentdojo-banking", "agentdojo-workspace"} <= targets
    assert checkers["reference"] == "harness.checker:ReferenceChecker"
    assert checkers["static-scanner"] == "harness.scanner.as_checker:StaticScannerChecker"
    assert isinstance(resolve_checker("static-scanner"), StaticScannerChecker)
    assert resolve_checker("reference", seed=5).seed == 5


def test_builtins_resolve_without_installed_metadata(monkeypatch) -> None:
    import harness.plugins

    monkeypatch.setattr(harness.plugins, "entry_points", lambda group: [])
    assert "toy_domain" in harness.plugins.registered(TARGETS_GROUP)
    assert load_target("toy_domain").name == "toy_domain"
    assert isinstance(resolve_checker("static-scanner"), StaticScannerChecker)


def test_unknown_names_are_one_line_errors_listing_the_known(tmp_path: Path) -> None:
    done = harness("check", "no-such-bench", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "unknown target" in done.stderr and "toy_domain" in done.stderr
    assert TARGETS_GROUP in done.stderr and "Traceback" not in done.stderr
    done = harness("check", "toy_domain", "--checker", "nope", cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown checker" in done.stderr and "static-scanner" in done.stderr
    done = harness("check", "toy_domain", "--checker", "collections:OrderedDict", cwd=tmp_path)
    assert done.returncode == 2
    assert "does not meet the Checker protocol (missing: name, version" in done.stderr
    done = harness("check", "toy_domain", "--checker", "argparse:Action", cwd=tmp_path)
    assert done.returncode == 2
    assert "cannot construct Action" in done.stderr and "Traceback" not in done.stderr
    done = harness("check", "toy_domain", "--checker", "json:dumps", cwd=tmp_path)
    assert done.returncode == 2  # a function would be called, whatever it does: refused
    assert "names dumps, which is no class" in done.stderr and "Traceback" not in done.stderr


def test_a_distributions_entry_point_names_a_target_and_a_checker(tmp_path: Path) -> None:
    site = distribution(tmp_path / "site")
    done = harness("check", "plugin_bench", "--json", cwd=tmp_path, paths=(site,))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["target"] == "plugin_bench"
    assert [t["tool"] for t in report["tools"]] == ["lend_book", "return_book"]
    done = harness(
        "check", "plugin_bench", "--checker", "bench-static", cwd=tmp_path, paths=(site,)
    )
    assert done.returncode == 0, done.stderr
    assert "static-scanner" in done.stdout


def test_plugin_adapter_meets_the_protocol() -> None:
    target = load_target(PLUGIN)
    assert isinstance(target.adapter, Adapter)
    assert sorted(target.contracts) == ["lend_book", "return_book"]


# --- drafts ------------------------------------------------------------------------------------


def test_drafts_never_reach_a_checker() -> None:
    path = TESTS / "plugin_bench" / "contracts" / "lend_book.yaml"
    written = Contract.model_validate(read_yaml(path))
    assert written.draft_ids() == ["eff.result_announced_draft"]
    target = load_target(PLUGIN)
    assert "eff.result_announced_draft" not in target.contracts["lend_book"].clause_ids()
    assert "eff.result" in target.contracts["lend_book"].clause_ids()
    report = ReferenceChecker().check(target, ["lend_book"]).tool("lend_book")
    graded = {c.clause_id for c in report.clauses}
    assert "eff.result" in graded and not any(i.endswith("_draft") for i in graded)


def _contract_with(**clauses: object) -> dict:
    base = yaml.safe_load((TESTS / "plugin_bench" / "contracts" / "return_book.yaml").read_text())
    return {**base, **clauses}


def test_a_draft_keeps_predicate_true_and_arguments_have_none() -> None:
    cited = {"text": "t", "inferred": True}
    ok = _contract_with(effects=[{"id": "eff.x_draft", "predicate": "True", **cited}])
    assert Contract.model_validate(ok).draft_ids() == ["eff.x_draft"]
    with pytest.raises(ValueError, match="still marked draft"):
        Contract.model_validate(
            _contract_with(effects=[{"id": "eff.x_draft", "predicate": "1 == 1", **cited}])
        )
    with pytest.raises(ValueError, match="argument clauses have no drafts"):
        Contract.model_validate(_contract_with(arguments=[{"id": "arg.reader_draft", **cited}]))


def test_validate_names_each_draft_and_exits_1(tmp_path: Path) -> None:
    done = harness("contracts", "validate", PLUGIN, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (
        "lend_book.yaml: eff.result_announced_draft: draft clause, excluded from every count; "
        "fix: write its predicate" in done.stderr
    )
    assert "2 contracts valid; 1 draft clause is not counted" in done.stderr


# --- the static-scanner checker ----------------------------------------------------------------


def test_static_checker_flags_a_mutant_only_through_its_mutated_site() -> None:
    target = load_target("toy_domain")
    checker = StaticScannerChecker()
    pairs = enumerate_pairs(target, sorted(target.contracts), ["M-PHANTOM", "M-PRECOND"])
    assert pairs
    detected = 0
    for pair in pairs:
        before = checker.check(target, [pair.tool]).tool(pair.tool)
        with applied(target.adapter, pair.mutant):
            after = checker.check(target, [pair.tool]).tool(pair.tool)
        new = {c.clause_id for c in after.violations()} - {c.clause_id for c in before.violations()}
        # flagged iff a new flag names the mutated function: ids hold the qualname, no line
        for clause_id in new:
            assert f".{pair.mutant.site.qualname}." in clause_id, (pair.id, clause_id)
        detected += bool(new)
        # the mutant was read from memory only: restored, the tool reports as before
        assert checker.check(target, [pair.tool]).tool(pair.tool) == before
    assert detected >= 1


def test_static_checker_scope_is_outside_the_reference_checker() -> None:
    static = {p.name for p in StaticScannerChecker().scope_files()}
    assert {"as_checker.py", "verb_pairs.py", "resolver.py"} <= static  # scanner and sites
    reference = ReferenceChecker().scope_files()
    assert all("scanner" not in p.parts and p.name != "scanner.py" for p in reference)


# --- a plan naming the plug-in, run under both checkers ----------------------------------------

PLAN = """
schema_version: 1
name: bench
description: plugin_bench through its entry point, under two checkers
seed: 3
checker: reference
comparison_checkers: [static-scanner]
timeout_seconds: 60
liveness_probes_per_tool: 4
arms:
  - name: bench
    kind: closed_world
    target: plugin_bench
    tools: all
    operators: [M-PHANTOM, M-PRECOND, M-IGNARG, M-PARTIAL]
    draw_per_operator: 2
"""


def test_a_plan_naming_the_plugin_runs_end_to_end_under_both_checkers(tmp_path: Path) -> None:
    site = distribution(tmp_path / "site")
    root = tmp_path / "project"
    (root / "plans").mkdir(parents=True)
    (root / "plans" / "bench.yaml").write_text(PLAN)
    for command in (("draw",), ("freeze",), ("run",), ("run", "--checker", "static-scanner")):
        done = harness(command[0], "plans/bench.yaml", *command[1:], cwd=root, paths=(site,))
        assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads((root / "plans" / "bench.freeze.json").read_text())
    assert "harness/scanner/as_checker.py" in record["hashes"]["checker_scope:static-scanner"]
    assert any(k.startswith("plugin_bench:") for k in record["hashes"]["contracts"])
    freeze_id = record["freeze_id"]
    runs = root / "results" / "bench"
    assert sorted(p.name for p in runs.iterdir()) == [freeze_id, f"{freeze_id}.static-scanner"]
    rows = {}
    for run in runs.iterdir():
        meta = json.loads((run / "run.json").read_text())
        lines = (run / "ledger.jsonl").read_text().splitlines()
        rows[meta["checker"].split()[0]] = [json.loads(line) for line in lines]
    assert set(rows) == {"reference", "static-scanner"}
    assert len(rows["reference"]) == len(rows["static-scanner"]) >= 4
    for checker in rows:  # one freeze, two checkers: every row carries the freeze id itself
        assert all(r["freeze_id"] == freeze_id and not r["post_hoc"] for r in rows[checker])
    statuses = {r["status"] for r in rows["reference"]}
    assert "detected" in statuses and statuses <= {"detected", "missed", "untestable"}
    done = harness(
        "compare", str(runs / freeze_id), str(runs / f"{freeze_id}.static-scanner"), cwd=root
    )
    assert done.returncode == 0, done.stderr
    assert "M-PHANTOM" in done.stdout and "M-PRECOND" in done.stdout


def test_an_unfrozen_checker_runs_only_post_hoc(tmp_path: Path) -> None:
    # the plan names the adapter by `package.module:Class` (no entry point): drawn mutants
    # and the liveness corpus are keyed by the adapter's name, and the run finds them
    root = tmp_path / "project"
    (root / "plans").mkdir(parents=True)
    plan = PLAN.replace("comparison_checkers: [static-scanner]\n", "").replace(
        "target: plugin_bench", f"target: {PLUGIN}"
    )
    (root / "plans" / "bench.yaml").write_text(plan)
    for command in ("draw", "freeze"):
        assert harness(command, "plans/bench.yaml", cwd=root).returncode == 0
    done = harness("run", "plans/bench.yaml", "--checker", "static-scanner", cwd=root)
    assert done.returncode == 2
    assert "is not frozen with plan bench" in done.stderr and "comparison_checkers" in done.stderr
    assert not (root / "results").exists()
    done = harness("run", "plans/bench.yaml", "--checker", "static-scanner", "--post-hoc", cwd=root)
    assert done.returncode == 0, done.stderr
    (run,) = (root / "results" / "bench").iterdir()
    freeze_id = json.loads((root / "plans" / "bench.freeze.json").read_text())["freeze_id"]
    assert run.name == f"posthoc-{freeze_id}.static-scanner"
    rows = [json.loads(line) for line in (run / "ledger.jsonl").read_text().splitlines()]
    assert rows and all(r["post_hoc"] and r["freeze_id"] == f"posthoc-{freeze_id}" for r in rows)


# --- scaffolds ---------------------------------------------------------------------------------


def test_new_adapter_writes_a_package_that_meets_the_protocol(tmp_path: Path) -> None:
    done = harness("new-adapter", "my_bench", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    package = tmp_path / "my_bench"
    assert {p.name for p in package.iterdir()} >= {"adapter.py", "tools.py", "contracts"}
    done = harness("check", "my_bench.adapter:MyBenchAdapter", cwd=tmp_path, paths=(tmp_path,))
    # no contract yet: the reference checker has nothing to grade, and says so in one line
    assert done.returncode == 0, done.stderr
    assert "0 tools" in done.stdout
    again = harness("new-adapter", "my_bench", cwd=tmp_path)
    assert again.returncode == 2 and "never overwrites" in again.stderr
    assert harness("new-adapter", "My-Bench", cwd=tmp_path).returncode == 2


def test_new_contract_drafts_a_contract_that_validates_with_drafts_listed(tmp_path: Path) -> None:
    assert harness("new-adapter", "my_bench", cwd=tmp_path).returncode == 0
    reference = "my_bench.adapter:MyBenchAdapter"
    paths = (tmp_path,)
    done = harness("new-contract", "add_note", "--target", reference, cwd=tmp_path, paths=paths)
    assert done.returncode == 0, done.stderr
    written = tmp_path / "my_bench" / "contracts" / "add_note.yaml"
    contract = Contract.model_validate(read_yaml(written))
    assert contract.signature["key"].type == "str" and "env" not in contract.signature
    assert contract.draft_ids() == [
        "pre.key_already_used_draft",
        "eff.store_note_under_key_draft",
        "eff.note_stored_under_key_draft",
    ]
    assert (
        contract.preconditions[0].provenance.quote
        == "Raises ValueError if the key is already used."
    )
    done = harness("contracts", "validate", str(written), cwd=tmp_path, paths=paths)
    assert done.returncode == 2 and "or give its adapter" in done.stderr  # target unregistered
    done = harness("contracts", "validate", reference, cwd=tmp_path, paths=paths)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("draft clause, excluded from every count") == 3
    target = load_target_from(tmp_path, reference)
    assert target.contracts["add_note"].clause_ids() == []  # drafts never count
    again = harness("new-contract", "add_note", "--target", reference, cwd=tmp_path, paths=paths)
    assert again.returncode == 2 and "never overwrites" in again.stderr


def load_target_from(folder: Path, reference: str):
    sys.path.insert(0, str(folder))
    try:
        return load_target(reference)
    finally:
        sys.path.remove(str(folder))


def test_new_contract_rejects_an_unknown_tool(tmp_path: Path) -> None:
    done = harness("new-contract", "nope", "--target", "toy_domain", "--out", "-", cwd=tmp_path)
    assert done.returncode == 2
    assert "is not a tool of this target" in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(UserError):
        load_target("plugin_bench.adapter:Missing")


SECTIONED = '''
def pay(wallet, amount: int, note: str | None = None) -> dict:
    """Pay an amount from the wallet.

    Args:
        amount: how much to pay.
        note: an optional note.

    Raises:
        ValueError: when the wallet holds less than the amount.

    Returns:
        The new balance.
    """
'''


def test_new_contract_reads_docstring_sections(tmp_path: Path, monkeypatch) -> None:
    from harness.scaffold import draft_contract

    (tmp_path / "sectioned.py").write_text(SECTIONED)
    monkeypatch.syspath_prepend(str(tmp_path))
    import sectioned

    class Bench:  # just what draft_contract reads of an adapter
        name = "sectioned"

        def tool_names(self) -> list[str]:
            return ["pay"]

        def tool_function(self, tool: str):
            return sectioned.pay

        def injected_parameters(self, tool: str) -> frozenset[str]:
            return frozenset({"wallet"})

        def source_root(self) -> Path:
            return tmp_path

    drafted = draft_contract(Bench(), "pay")  # type: ignore[arg-type]
    assert drafted["signature"] == {
        "amount": {"type": "int"},
        "note": {"type": "str|None", "optional": True},
    }
    assert [c["id"] for c in drafted["preconditions"]] == ["pre.when_wallet_holds_less_draft"]
    assert [(c["id"], c["provenance"]["line"]) for c in drafted["effects"]] == [
        ("eff.pay_amount_wallet_draft", 3),
        ("eff.new_balance_draft", 13),
    ]
    Contract.model_validate(drafted)


def test_a_plugin_that_reuses_a_builtin_name_is_one_line_naming_both(tmp_path: Path) -> None:
    """Issue 32, item 8: a distribution registering `tau2-airline` used to replace the
    harness's own target silently."""
    info = tmp_path / "site" / "squatter-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: squatter\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[{TARGETS_GROUP}]\ntau2-airline = {PLUGIN}\n")
    for args in (["list", "targets"], ["check", "tau2-airline"], ["check", "toy_domain"]):
        done = harness(*args, cwd=tmp_path, paths=(tmp_path / "site",))
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        line = " ".join(done.stderr.split())
        assert "tau2-airline" in line and "contract-harness" in line and "squatter" in line


def test_list_shows_each_names_distribution(tmp_path: Path) -> None:
    site = distribution(tmp_path / "site")
    done = harness("list", "targets", "--json", "-", cwd=tmp_path, paths=(site,))
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["plugin_bench"]["distribution"] == "plugin-bench-dist"
    assert rows["toy_domain"]["distribution"] == "contract-harness"

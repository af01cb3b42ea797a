"""The CLI as a user runs it: a subprocess, its exit code, what it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOY_CONTRACTS = Path(__file__).resolve().parents[1] / "toy_domain" / "contracts"


def harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def edited_contract(tmp_path: Path, old: str, new: str, tool: str = "transfer") -> Path:
    text = (TOY_CONTRACTS / f"{tool}.yaml").read_text()
    assert old in text, f"{old!r} not in the {tool} contract"
    path = tmp_path / f"{tool}.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_validate_toy_domain_passes():
    done = harness("contracts", "validate", "toy_domain")
    assert done.returncode == 0, done.stderr
    assert "24 contracts valid" in done.stdout


def test_validate_rejects_a_wrong_quote(tmp_path):
    path = edited_contract(
        tmp_path,
        "Raises ValueError if the amount exceeds the source balance.",
        "Raises ValueError if the amount exceeds the daily limit.",
    )
    done = harness("contracts", "validate", str(path))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    line = next(x for x in done.stderr.splitlines() if "daily limit" in x)
    assert line.startswith(str(path))
    assert "pre.sufficient_funds.provenance" in line
    assert "fix:" in line


def test_validate_rejects_a_free_name(tmp_path):
    path = edited_contract(
        tmp_path, "args.from_account in pre.bank.accounts", "from_account in pre.bank.accounts"
    )
    done = harness("contracts", "validate", str(path))
    assert done.returncode == 2
    assert "pre.source_exists.predicate" in done.stderr
    assert "name 'from_account' is not defined" in done.stderr


def test_validate_rejects_import_in_a_predicate(tmp_path):
    path = edited_contract(
        tmp_path,
        "args.from_account in pre.bank.accounts",
        "__import__('os').system('touch pwned') == 0",
    )
    done = harness("contracts", "validate", str(path), cwd=tmp_path)
    assert done.returncode == 2
    assert "pre.source_exists.predicate" in done.stderr
    assert not (tmp_path / "pwned").exists()


def test_validate_rejects_a_tool_return_quote_on_a_docstring_line(tmp_path):
    path = edited_contract(tmp_path, "surface: docstring", "surface: tool_return")
    done = harness("contracts", "validate", str(path))
    assert done.returncode == 2
    assert "must sit on a return or raise line" in done.stderr


def test_validate_rejects_signature_and_frame_mismatches(tmp_path):
    path = edited_contract(tmp_path, 'default: ""', 'default: "-"')
    done = harness("contracts", "validate", str(path))
    assert done.returncode == 2
    assert "signature.memo.default: the tool's default is ''" in done.stderr
    path = edited_contract(tmp_path, "amount: {type: int", "amount: {type: float")
    done = harness("contracts", "validate", str(path))
    assert "signature.amount.type: the tool annotates amount as int" in done.stderr
    path = edited_contract(tmp_path, "bank.transfers, bank.next", "bank.transfer_log, bank.next")
    done = harness("contracts", "validate", str(path))
    assert "frame.bank.writes: path 'bank.transfer_log' matches nothing" in done.stderr
    path = edited_contract(tmp_path, "len(post.bank.transfers)", "len(post.bank.transfer_log)")
    done = harness("contracts", "validate", str(path))
    assert "reads post.bank.transfer_log, which a fresh snapshot lacks" in done.stderr


def test_malformed_yaml_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("tool: transfer\n  target: [toy_domain\n")
    done = harness("contracts", "validate", str(bad))
    assert done.returncode == 2
    assert "malformed YAML" in done.stderr and "Traceback" not in done.stderr


def test_check_prints_every_clause_and_conforms():
    done = harness("check", "toy_domain")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "24 tools: 24 CONFORMS, 0 VIOLATES, 0 UNTESTABLE" in done.stdout


def test_check_json_report_has_witness_fields(tmp_path):
    out = tmp_path / "report.json"
    done = harness("check", "toy_domain", "--tool", "transfer", "--json", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["target"] == "toy_domain" and report["schema_version"] == 1
    (tool,) = report["tools"]
    assert tool["tool"] == "transfer" and tool["verdict"] == "CONFORMS"
    assert {c["clause_id"] for c in tool["clauses"]} >= {
        "pre.sufficient_funds",
        "eff.debit",
        "reset",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("check", "no_such_target"), "unknown target"),
        (("check", "toy_domain", "--tool", "nope"), "has no contract"),
        (("scan", "toy_domain", "--tool", "nope"), "is not a tool of this target"),
        (("contracts", "validate", "/no/such/dir"), "no such file or folder"),
    ],
)
def test_user_errors_exit_2_without_traceback(args, message):
    done = harness(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_scan_prints_flags_for_a_person():
    done = harness("scan", "toy_domain", "--json")
    assert done.returncode == 0, done.stderr
    flags = json.loads(done.stdout)
    assert all(
        {"file", "function", "line", "check", "class_hint", "message"} <= set(f) for f in flags
    )


def test_schema_is_json_schema():
    done = harness("contracts", "schema")
    schema = json.loads(done.stdout)
    assert schema["title"] == "Contract"
    assert "preconditions" in schema["properties"]


def test_baseline_writes_one_row_per_tool_and_a_summary(tmp_path):
    out = tmp_path / "baseline"
    done = harness("baseline", "toy_domain", "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (out / "tools.jsonl").read_text().splitlines()]
    assert len(rows) == 24 and {r["verdict"] for r in rows} == {"CONFORMS"}
    assert (
        "| toy_domain | `transfer` | CONFORMS | — | — | — | n/a |"
        in (out / "SUMMARY.md").read_text()
    )
    assert "Headline: 0 tools with a headline-eligible finding" in (out / "SUMMARY.md").read_text()
    assert not any(r["headline_eligible"] for r in rows)
    assert all(r["dependent_tasks"] is None for r in rows)  # the toy domain has no grader
    assert json.loads((out / "reports" / "toy_domain.json").read_text())["target"] == "toy_domain"


def test_an_error_naming_a_reference_prints_it_literally():
    """rich turns `:X:` into an emoji unless told not to; a reference must stay readable."""
    done = harness("check", "toy_domain", "--checker", "nope.mod:X")
    assert done.returncode == 2
    assert done.stderr.startswith("error: nope.mod:X: checker: cannot load nope.mod:X")
    assert "Traceback" not in done.stderr


def test_list_names_every_operator_target_and_checker():
    done = harness("list", "operators", "--json")
    assert done.returncode == 0, done.stderr
    operators = {row["name"]: row for row in json.loads(done.stdout)}
    # every family, the bridges included: the list is the registry, not the import order
    assert operators["M-PHANTOM"]["defect_class"] == "phantom_effect"
    assert operators["C-REORDER"]["arm"] == "controls"
    assert any(name.startswith("CR-core/") for name in operators)
    assert any(name.startswith("MM-") for name in operators)
    targets = json.loads(harness("list", "targets", "--json").stdout)
    assert {
        "name": "toy_domain",
        "class": "harness.targets.toy:ToyAdapter",
        "distribution": "contract-harness",
    } in targets
    shown = harness("list", "checkers")
    assert shown.returncode == 0 and "static-scanner" in shown.stdout
    assert "harness.scanner.as_checker:StaticScannerChecker" in shown.stdout
    assert harness("list", "plans").returncode == 2  # argparse: not a kind


def test_an_unmatched_operator_pattern_points_at_harness_list(tmp_path):
    from harness.errors import UserError
    from harness.execution.draw import expand_operators
    from harness.execution.plan import ArmSpec

    arm = ArmSpec(
        name="a", kind="closed_world", target="toy_domain", operators=["X-*"], draw_per_operator=1
    )
    with pytest.raises(UserError, match="harness list operators"):
        expand_operators(arm)


def test_the_command_runs_under_a_fixed_hash_seed_unless_one_is_set():
    """A row may quote a set of strings (AgentDojo's `list(set(participants))` in a
    refusal's message): `harness` re-runs itself under PYTHONHASHSEED=0, so two runs of the
    same pair write the same text; a seed the user fixed is kept."""
    code = (
        "import os\nfrom harness.cli import fixed_hash_seed\nfixed_hash_seed()\n"
        "print(os.environ['PYTHONHASHSEED'], hash('participant'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}

    def seed_and_hash(extra: dict[str, str]) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], env={**env, **extra}, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    first, second = seed_and_hash({}), seed_and_hash({"PYTHONHASHSEED": "random"})
    assert first == second and first.startswith("0 ")
    assert seed_and_hash({"PYTHONHASHSEED": "5"}).startswith("5 ")
    assert seed_and_hash({"PYTHONHASHSEED": "5"}) != first

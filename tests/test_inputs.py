"""Bad and changed inputs a user meets: a post-hoc run still validates its plan, non-UTF-8
files, and the small things the CLI says (issue 15, items 5, 6, 8)."""

from __future__ import annotations

import json

from test_cli import TOY_CONTRACTS
from test_runner import drawn_and_frozen, harness, project


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_post_hoc_still_validates_the_plan(tmp_path):
    root = project(tmp_path, per_operator=1)
    drawn_and_frozen(root)
    plan = root / "plans" / "small.yaml"
    plan.write_text(plan.read_text().replace("M-PHANTOM", "M-NOPE"))
    done = harness("run", "plans/small.yaml", "--post-hoc", cwd=root)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = error_lines(done.stderr)
    assert line.startswith("error: plans/small.yaml: arms[closed_world].operators: ")
    assert "unknown operator 'M-NOPE'" in line
    assert not (root / "results").exists()


def test_unknown_operator_says_it_once_and_lists_the_known(tmp_path):
    root = project(tmp_path)
    plan = root / "plans" / "small.yaml"
    plan.write_text(plan.read_text().replace("M-PHANTOM", "M-NOPE"))
    done = harness("draw", "plans/small.yaml", cwd=root)
    assert done.returncode == 2
    (line,) = error_lines(done.stderr)
    assert line.count("unknown operator") == 1, line
    assert "fix: use one of " in line and "M-PRECOND" in line


def test_a_non_utf8_plan_is_one_line(tmp_path):
    root = project(tmp_path)
    plan = root / "plans" / "small.yaml"
    plan.write_bytes(plan.read_bytes().replace(b"a small plan", b"a sm\xe4ll plan"))
    done = harness("draw", "plans/small.yaml", cwd=root)
    assert done.returncode == 2, done.stderr
    (line,) = error_lines(done.stderr)
    assert line.startswith(f"error: {plan}") or line.startswith("error: plans/small.yaml")
    assert "UTF-8" in line and "fix: " in line


def test_a_non_utf8_contract_is_one_line(tmp_path):
    path = tmp_path / "transfer.yaml"
    text = (TOY_CONTRACTS / "transfer.yaml").read_bytes()
    path.write_bytes(text.replace(b"Transfer", b"Tr\xe4nsfer", 1))
    done = harness("contracts", "validate", str(path), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = error_lines(done.stderr)
    assert "Traceback" not in done.stderr
    assert lines[0].startswith(str(path)) and "UTF-8" in lines[0]
    assert lines[-1] == "1 problem in 1 contract"


def test_a_plan_field_error_points_to_the_plan_schema(tmp_path):
    root = project(tmp_path)
    plan = root / "plans" / "small.yaml"
    plan.write_text(plan.read_text().replace("timeout_seconds: 20", "timeout_seconds: [1]"))
    done = harness("draw", "plans/small.yaml", cwd=root)
    assert done.returncode == 2
    (line,) = error_lines(done.stderr)
    assert "timeout_seconds" in line
    assert "harness plan schema" in line and "contracts schema" not in line


def test_a_resumed_run_keeps_its_first_start(tmp_path):
    root = project(tmp_path, per_operator=1)
    drawn_and_frozen(root)
    assert harness("run", "plans/small.yaml", "--workers", "1", cwd=root).returncode == 0
    (run_json,) = (root / "results" / "small").glob("*/run.json")
    first = json.loads(run_json.read_text())
    assert first["resumed_at"] == []
    assert harness("run", "plans/small.yaml", "--workers", "1", cwd=root).returncode == 0
    again = json.loads(run_json.read_text())
    assert again["started_at"] == first["started_at"]
    assert len(again["resumed_at"]) == 1 and again["resumed_at"][0] >= first["started_at"]


def test_run_help_explains_the_plan_argument(tmp_path):
    done = harness("run", "--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "plans/NAME.yaml" in done.stdout.split("positional arguments:")[1].split("options")[0]


def test_a_field_of_the_wrong_form_names_the_fix_once(tmp_path):
    """`seed: x` (pydantic's int_parsing) and a form with no fix of its own (finite_number)
    each say where the forms are once: the fix is never the schema command repeated in
    parentheses."""
    root = project(tmp_path)
    plan = root / "plans" / "small.yaml"
    text = plan.read_text()
    assert "seed: 7\n" in text and "timeout_seconds: 20\n" in text
    text = text.replace("seed: 7\n", "seed: x\n")
    plan.write_text(text.replace("timeout_seconds: 20", "timeout_seconds: .inf"))
    done = harness("draw", "plans/small.yaml", cwd=root)
    assert done.returncode == 2, done.stdout + done.stderr
    found = {line.split(": ")[2]: line for line in error_lines(done.stderr)}
    assert set(found) == {"seed", "timeout_seconds"}, done.stderr
    assert found["seed"].endswith(
        "fix: write a whole number (`harness plan schema` shows the field's form)"
    ), found["seed"]
    assert found["timeout_seconds"].endswith(
        "fix: see `harness plan schema` for the field's form"
    ), found["timeout_seconds"]
    for line in found.values():
        assert line.count("harness plan schema") == 1, line
    assert not (root / "results").exists() and not (root / "mutants").exists()

"""`new-contract` and `contracts validate` read a tool's annotations also when its module
uses `from __future__ import annotations` (the scaffold's own tools.py does)."""

from __future__ import annotations

from pathlib import Path

from test_plugins import harness

from harness.contracts.loader import read_yaml
from harness.contracts.model import Contract

REFERENCE = "my_bench.adapter:MyBenchAdapter"


def scaffold_with_typed_tool(tmp_path: Path) -> Path:
    assert harness("new-adapter", "my_bench", cwd=tmp_path).returncode == 0
    tools = tmp_path / "my_bench" / "tools.py"
    text = tools.read_text()
    assert "from __future__ import annotations" in text
    tools.write_text(
        text.replace(
            "def add_note(env: Environment, key: str, text: str) -> str:",
            "def add_note(\n    env: Environment, key: str, text: str, priority: int = 0,"
            " tags: list[str] | None = None\n) -> str:",
        )
    )
    return tmp_path / "my_bench" / "contracts" / "add_note.yaml"


def test_new_contract_resolves_string_annotations(tmp_path):
    written = scaffold_with_typed_tool(tmp_path)
    done = harness(
        "new-contract", "add_note", "--target", REFERENCE, cwd=tmp_path, paths=(tmp_path,)
    )
    assert done.returncode == 0, done.stderr
    signature = Contract.model_validate(read_yaml(written)).signature
    assert {name: spec.type for name, spec in signature.items()} == {
        "key": "str",
        "text": "str",
        "priority": "int",
        "tags": "list|None",
    }


def test_validate_flags_a_declared_type_the_annotation_contradicts(tmp_path):
    written = scaffold_with_typed_tool(tmp_path)
    done = harness(
        "new-contract", "add_note", "--target", REFERENCE, cwd=tmp_path, paths=(tmp_path,)
    )
    assert done.returncode == 0, done.stderr
    text = written.read_text()
    assert "priority:\n    type: int" in text, text
    written.write_text(text.replace("priority:\n    type: int", "priority:\n    type: str"))
    done = harness("contracts", "validate", REFERENCE, cwd=tmp_path, paths=(tmp_path,))
    assert done.returncode == 2, done.stderr
    line = next(x for x in done.stderr.splitlines() if "signature.priority.type" in x)
    assert "the tool annotates priority as int" in line and "fix: write type: int" in line

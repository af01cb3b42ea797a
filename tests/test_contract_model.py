import textwrap
from pathlib import Path

import pytest
import yaml

from harness.contracts.loader import load_contract, read_yaml
from harness.contracts.model import Tier
from harness.errors import UserError

BASE = """
tool: t
target: toy_domain
source: {file: toy_domain/bank.py, function: t, start_line: 1, end_line: 2}
signature:
  x: {type: int, effective: true}
preconditions:
  - id: pre.positive
    text: x is positive.
    predicate: args.x > 0
    provenance: {surface: docstring, quote: "x must be positive", file: toy_domain/bank.py, line: 3}
arguments:
  - id: arg.x
    text: x reaches the state.
    provenance: {surface: maintainer_annotation, quote: "x", file: README.md, line: 1}
invariants:
  - id: inv.ok
    text: fine
    predicate: "True"
    inferred: true
success: {signal: no_error, inferred: true}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_tiers_are_derived(tmp_path):
    contract = load_contract(write(tmp_path, BASE))
    tiers = {
        c.id: c.tier for c in [*contract.preconditions, *contract.arguments, *contract.invariants]
    }
    assert tiers == {
        "pre.positive": Tier.AGENT_VISIBLE,
        "arg.x": Tier.MAINTAINER_ANNOTATED,
        "inv.ok": Tier.INFERRED,
    }


@pytest.mark.parametrize(
    ("surface", "tier"),
    [
        ("readme", Tier.AGENT_VISIBLE),
        ("external_standard", Tier.AGENT_VISIBLE),
        ("prompt_template", Tier.AGENT_VISIBLE),
        ("maintainer_annotation", Tier.MAINTAINER_ANNOTATED),
    ],
)
def test_readme_and_external_standard_are_agent_visible(tmp_path, surface, tier):
    text = BASE.replace("surface: maintainer_annotation", f"surface: {surface}")
    assert load_contract(write(tmp_path, text)).arguments[0].tier is tier


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "id: pre.positive",
            "id: positive",
            "preconditions: clause id 'positive' must start with 'pre.'",
        ),
        (
            "invariants:\n",
            "invariants:\n  - {id: inv.ok, text: d, predicate: 'True', inferred: true}\n",
            "invariants: clause id 'inv.ok' is used twice",
        ),
        (
            "x: {type: int, effective: true}",
            "x: {type: int}",
            "arg.x declared but signature.x lacks",
        ),
        (
            "success: {signal: no_error, inferred: true}",
            "success: {signal: no_error, biconditional: true, inferred: true}",
            "needs a `justification`",
        ),
        ("    inferred: true\n", "", "exactly one of `provenance"),
        ("type: int", "type: integer", "signature.x.type"),
        ("tool: t", "tool: t\nbogus: 1", "bogus"),
    ],
)
def test_structural_errors_name_the_field(tmp_path, old, new, expected):
    assert old in BASE
    with pytest.raises(UserError) as info:
        load_contract(write(tmp_path, BASE.replace(old, new, 1)))
    text = str(info.value)
    assert str(tmp_path / "c.yaml") in text
    assert expected in text
    assert "fix:" in text


def test_malformed_yaml_names_the_line(tmp_path):
    with pytest.raises(UserError) as info:
        load_contract(write(tmp_path, "tool: t\n  bad: [\n"))
    assert "line" in str(info.value)
    assert "malformed YAML" in str(info.value)


def test_read_yaml_parses_like_safe_load_and_hands_out_copies(tmp_path):
    path = write(tmp_path, BASE)
    first = read_yaml(path)
    assert first == yaml.safe_load(BASE)
    first["tool"] = "changed"  # a caller's edit must not reach the next reader of the file
    assert read_yaml(path)["tool"] == "t"


def test_malformed_yaml_message_is_the_pure_python_parsers(tmp_path):
    text = "tool: t\n  bad: [\n"
    with pytest.raises(yaml.YAMLError) as reference:
        yaml.safe_load(text)
    with pytest.raises(UserError) as info:
        load_contract(write(tmp_path, text))
    assert f"line {reference.value.problem_mark.line + 1}" in str(info.value)
    assert reference.value.problem in str(info.value)

"""The open-world bridges drive Cosmic Ray's and mutmut's own operators in memory."""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

import cosmic_ray.plugins
import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper
from mutmut.mutation.file_mutation import MutationVisitor, deep_replace
from mutmut.mutation.mutators import mutation_operators
from mutmut.mutation.pragma_handling import IgnoredCode

from harness.mutation.model import Arm, Operator, SiteContext
from harness.mutation.open_world import (
    COSMIC_RAY_OPERATORS,
    COSMIC_RAY_SKIPPED,
    MM_CATEGORIES,
    MM_COVERED_BY_COSMIC_RAY,
    MUTMUT_OPERATORS,
    OPEN_WORLD_OPERATORS,
    register_open_world,
)
from toy_domain import bank

CONTEXT = SiteContext(tool="transfer", is_tool_function=True, is_reset=False)
TRANSFER = textwrap.dedent(inspect.getsource(bank.transfer))

# One function that offers every bridged mutmut category at least once.
MM_SAMPLE = '''\
@audit("greet")
def greet(name: str, count: int = 1) -> str:
    """Greet someone."""
    # a comment that must survive
    label = "hello"
    total: int = count
    total += 2
    options = dict(loud=True, polite=False)
    shout = lambda: label
    if name.lower() in ("bob", "eve"):
        label = label.upper()
    first, rest = name.split(" ", 1)
    for _ in range(count):
        break
    match count:
        case 0:
            pass
        case _:
            pass
    suffix = "!" if options["loud"] else "."
    return format_greeting(label, name, suffix)
'''

# category -> a line that at least one of the category's mutants contains.
MM_EXPECTED = {
    "string": 'label = "XXhelloXX"',
    "call_arg": "return format_greeting(label, None, suffix)",
    "assign_none": "label = None",
    "dict_kwarg": "options = dict(loudXX=True, polite=False)",
    "str_method": "if name.upper() in",
    "augassign_to_assign": "total = 2",
    "augassign_op": "total -= 2",
    "keyword": "if name.lower() not in",
    "name": "options = dict(loud=False, polite=False)",
    "lambda": "shout = lambda: None",
    "match_case": "match count:\n        case _:",
    "if_exp": 'suffix = "!" if (options["loud"]) and False else "."',
}


def _all_mutants(operator: Operator, source: str) -> list[str]:
    return [
        operator.mutate(source, CONTEXT, index)
        for index in range(operator.occurrences(source, CONTEXT))
    ]


@pytest.fixture(autouse=True)
def _empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Every test runs in an empty directory that must still be empty afterwards."""
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    yield
    assert list(workdir.iterdir()) == []


# --------------------------------------------------------------------------------------------
# Catalogue and registration
# --------------------------------------------------------------------------------------------


def test_cosmic_ray_names_are_the_providers_minus_documented_skips():
    listed = set(cosmic_ray.plugins.operator_names())
    assert set(COSMIC_RAY_SKIPPED) == {"core/VariableReplacer", "core/VariableInserter"}
    for cr_name in COSMIC_RAY_SKIPPED:
        assert cosmic_ray.plugins.get_operator(cr_name).arguments()
    assert set(COSMIC_RAY_OPERATORS) == {f"CR-{name}" for name in listed - set(COSMIC_RAY_SKIPPED)}
    assert "CR-core/ReplaceBinaryOperator_Add_Sub" in COSMIC_RAY_OPERATORS


def test_registration_covers_every_bridge_operator():
    registered: list[Operator] = []
    register_open_world(registered.append)
    assert [op.name for op in registered] == list(OPEN_WORLD_OPERATORS)
    assert set(OPEN_WORLD_OPERATORS) == set(COSMIC_RAY_OPERATORS) | set(MUTMUT_OPERATORS)
    assert set(MUTMUT_OPERATORS) == {f"MM-{category}" for category in MM_CATEGORIES}
    for name, operator in OPEN_WORLD_OPERATORS.items():
        assert isinstance(operator, Operator)
        assert operator.name == name
        assert operator.arm is Arm.OPEN_WORLD
        assert operator.defect_class is None


# --------------------------------------------------------------------------------------------
# Cosmic Ray
# --------------------------------------------------------------------------------------------

CR_EXAMPLES = [
    pytest.param(name, example, id=f"{name}#{index}")
    for name, operator in COSMIC_RAY_OPERATORS.items()
    for index, example in enumerate(operator.operator_class.examples())
]


@pytest.mark.parametrize(("name", "example"), CR_EXAMPLES)
def test_cosmic_ray_examples_module_level_and_inside_a_def(name, example):
    """Cosmic Ray's examples() are module-level snippets. The bridge is text in, text out, so
    it is checked on them as they are and wrapped in `def f():` (the site shape)."""
    assert not example.operator_args  # only the skipped operators take arguments
    operator = OPEN_WORLD_OPERATORS[name]
    cases = [
        (example.pre_mutation_code, example.post_mutation_code),
        (
            "def f():\n" + textwrap.indent(example.pre_mutation_code, "    "),
            "def f():\n" + textwrap.indent(example.post_mutation_code, "    "),
        ),
    ]
    for pre, post in cases:
        count = operator.occurrences(pre, CONTEXT)
        if pre == post:
            # An example of "nothing to mutate" (ExceptionReplacer on a bare except).
            assert count <= example.occurrence
            with pytest.raises(IndexError):
                operator.mutate(pre, CONTEXT, example.occurrence)
        else:
            assert example.occurrence < count
            # Exact, not just modulo whitespace: the bridge returns Cosmic Ray's own get_code().
            assert operator.mutate(pre, CONTEXT, example.occurrence) == post


def test_cosmic_ray_occurrences_agree_with_its_work_items(tmp_path: Path):
    """Cosmic Ray's own `init` enumeration (work items for a module file) gives, per operator,
    the same occurrences at the same positions as the bridge, on `transfer` and a sample."""
    from cosmic_ray.commands.init import _all_work_items

    sample = textwrap.dedent(
        """\
        @decorated
        def sample(a, b=3):
            total = a + b * 2 - (a // b) % 4
            flags = not a and (b or -a) and ~b
            for i in range(a):
                if i is None or i == 2 or a != b:
                    continue
                while a >= b:
                    break
            try:
                x = -1.5 if a < b else True
            except (KeyError, ValueError):
                x = False
            assert a <= b > 0
            return total, flags, x, a << 1 >> b | 1 & 2 ^ 3, a ** 2
        """
    )
    for index, source in enumerate([TRANSFER, sample]):
        module_file = tmp_path / f"site_{index}.py"
        module_file.write_text(source, encoding="utf-8")
        expected: dict[str, list] = defaultdict(list)
        for item in _all_work_items([module_file], {}):
            (spec,) = item.mutations
            expected[f"CR-{spec.operator_name}"].append((spec.start_pos, spec.end_pos))
        assert sum(len(positions) for positions in expected.values()) > 20
        for name, operator in COSMIC_RAY_OPERATORS.items():
            positions = operator.positions(source)
            assert positions == expected.get(name, []), name
            assert operator.occurrences(source, CONTEXT) == len(positions)
            with pytest.raises(IndexError):
                operator.mutate(source, CONTEXT, len(positions))


def test_cosmic_ray_on_transfer():
    counts = {name: op.occurrences(TRANSFER, CONTEXT) for name, op in COSMIC_RAY_OPERATORS.items()}
    assert sum(counts.values()) > 20
    assert counts["CR-core/AddNot"] == 7  # the seven `if` guards
    assert counts["CR-core/NumberReplacer"] == 2  # `amount <= 0`, +1 and -1
    for name, count in counts.items():
        operator = COSMIC_RAY_OPERATORS[name]
        mutants = _all_mutants(operator, TRANSFER)
        assert len(mutants) == count
        for mutant in mutants:
            assert mutant != TRANSFER
            tree = ast.parse(mutant)  # every transfer mutant here is valid Python
            assert [node.name for node in tree.body] == ["transfer"]
            compile(mutant, "<mutant>", "exec")
        # Stable numbering: a second pass gives the same texts in the same order.
        assert _all_mutants(operator, TRANSFER) == mutants
    assert "if amount <= 1:" in COSMIC_RAY_OPERATORS["CR-core/NumberReplacer"].mutate(
        TRANSFER, CONTEXT, 0
    )


# --------------------------------------------------------------------------------------------
# mutmut
# --------------------------------------------------------------------------------------------


def _mutmut_full_table(source: str) -> list[str]:
    """Every mutant mutmut's complete operator table makes on `source` (undecorated)."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    visitor = MutationVisitor(mutation_operators, IgnoredCode(set(), set(), set()))
    wrapper.visit(visitor)
    return [
        deep_replace(wrapper.module, m.original_node, m.mutated_node).code
        for m in visitor.mutations
    ]


@pytest.mark.parametrize("category", sorted(MM_EXPECTED))
def test_mutmut_category_makes_its_change(category):
    operator = MUTMUT_OPERATORS[f"MM-{category}"]
    mutants = _all_mutants(operator, MM_SAMPLE)
    assert mutants, category
    assert any(MM_EXPECTED[category] in mutant for mutant in mutants), mutants
    for mutant in mutants:
        assert mutant != MM_SAMPLE
        assert mutant.startswith('@audit("greet")\ndef greet(')  # decorator kept, not mutated
        assert "# a comment that must survive" in mutant
        compile(mutant, "<mutant>", "exec")
    assert _all_mutants(operator, MM_SAMPLE) == mutants


def test_mutmut_categories_are_mutmuts_table():
    """The bridged categories plus those left to Cosmic Ray make exactly the mutants of
    mutmut's whole table (decorator stripped: mutmut skips decorated functions outright)."""
    assert set(MM_EXPECTED) == set(MM_CATEGORIES)
    undecorated = MM_SAMPLE.split("\n", 1)[1]
    pairs = [
        pair
        for table in (MM_CATEGORIES, MM_COVERED_BY_COSMIC_RAY)
        for category_pairs in table.values()
        for pair in category_pairs
    ]
    assert {fn for _, fn in pairs} == {fn for _, fn in mutation_operators}

    ours = Counter(
        mutant.split("\n", 1)[1]
        for operator in MUTMUT_OPERATORS.values()
        for mutant in _all_mutants(operator, MM_SAMPLE)
    )
    for category in MM_COVERED_BY_COSMIC_RAY:
        wrapper = MetadataWrapper(cst.parse_module(undecorated))
        visitor = MutationVisitor(
            MM_COVERED_BY_COSMIC_RAY[category], IgnoredCode(set(), set(), set())
        )
        wrapper.visit(visitor)
        ours.update(
            deep_replace(wrapper.module, m.original_node, m.mutated_node).code
            for m in visitor.mutations
        )
    assert ours == Counter(_mutmut_full_table(undecorated))


def test_mutmut_specific_changes():
    call_arg = _all_mutants(MUTMUT_OPERATORS["MM-call_arg"], MM_SAMPLE)
    assert any("return format_greeting(label, suffix)" in m for m in call_arg)  # argument removed
    assert any("return format_greeting(None, name, suffix)" in m for m in call_arg)
    # mutmut leaves the `audit("greet")` decorator and `isinstance`/`len` calls alone.
    assert all('@audit("greet")' in m for m in call_arg)
    strings = _all_mutants(MUTMUT_OPERATORS["MM-string"], MM_SAMPLE)
    assert any('label = "HELLO"' in m for m in strings)
    assert all('"""Greet someone."""' in m for m in strings)  # docstrings are not mutated


def test_mutmut_on_transfer_and_pragma():
    counts = {name: op.occurrences(TRANSFER, CONTEXT) for name, op in MUTMUT_OPERATORS.items()}
    assert counts["MM-string"] >= 1 and counts["MM-call_arg"] >= 1
    assert counts["MM-assign_none"] == 1  # record = bank._record_transfer(...)
    for name in counts:
        for mutant in _all_mutants(MUTMUT_OPERATORS[name], TRANSFER):
            assert mutant != TRANSFER
            compile(mutant, "<mutant>", "exec")
    source = "def f(a):\n    x = a  # pragma: no mutate\n    y = a\n    return x, y\n"
    mutants = _all_mutants(MUTMUT_OPERATORS["MM-assign_none"], source)
    assert mutants == ["def f(a):\n    x = a  # pragma: no mutate\n    y = None\n    return x, y\n"]


_WATCHING: list[list[tuple]] = []
_WRITE_EVENTS = {"os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.truncate", "os.symlink"}
_PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork"}


def _audit(event: str, args: tuple) -> None:
    if not _WATCHING:
        return
    if event == "open":
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        if any(c in mode for c in "wax+") or flags & 0o3:  # O_WRONLY / O_RDWR
            _WATCHING[-1].append((event, args))
    elif event in _WRITE_EVENTS or event in _PROCESS_EVENTS:
        _WATCHING[-1].append((event, args))


sys.addaudithook(_audit)


def test_bridges_open_nothing_for_writing_and_start_no_process():
    """Audit hook: no file opened for writing, removed or renamed, no subprocess, anywhere
    (not only in the cwd), while every bridge operator enumerates and mutates."""
    events: list[tuple] = []
    _WATCHING.append(events)
    try:
        for operator in OPEN_WORLD_OPERATORS.values():
            for source in (TRANSFER, MM_SAMPLE):
                _all_mutants(operator, source)
    finally:
        _WATCHING.pop()
    assert events == []


def test_out_of_range_occurrences_raise():
    for operator in (COSMIC_RAY_OPERATORS["CR-core/AddNot"], MUTMUT_OPERATORS["MM-string"]):
        count = operator.occurrences(TRANSFER, CONTEXT)
        for bad in (-1, count):
            with pytest.raises(IndexError):
                operator.mutate(TRANSFER, CONTEXT, bad)

"""Open-world operators: Cosmic Ray's and mutmut's own mutation operators, used as libraries.

Both tools are driven in memory on the text of one function; nothing here runs a CLI, rewrites
a file, installs an import hook or builds mutmut's trampolines, and no target code is executed.

Cosmic Ray bridge (``CR-<provider>/<operator>``)
    The operators are enumerated from Cosmic Ray's plugin system
    (``cosmic_ray.plugins.OPERATOR_PROVIDERS`` / ``operator_names()`` / ``get_operator()``).
    Occurrences are counted exactly as ``cosmic_ray.commands.init`` enumerates work items:
    ``operator.mutation_positions(node)`` for every node of ``cosmic_ray.ast.ast_nodes(get_ast(
    source))``, in that order. A mutation is applied by ``cosmic_ray.mutating.mutate_code(source,
    operator, occurrence)``, Cosmic Ray's in-memory path: its ``MutationVisitor`` walks the parso
    tree, calls ``operator.mutate(node, index)`` at the chosen occurrence and returns the module's
    ``get_code()``, which is the whole function text since the function is the whole module.

mutmut bridge (``MM-<category>``)
    mutmut 3's per-node operators (``mutmut.mutation.mutators.mutation_operators``, plain
    functions over libcst nodes) are grouped by the kind of change they make. Each category runs
    mutmut's own ``file_mutation.MutationVisitor`` over a ``libcst.MetadataWrapper`` of the
    function text with only that category's ``(node type, operator)`` pairs, so mutmut's own skip
    rules apply (annotations, decorators, non-trivial parameter defaults, ``len``/``isinstance``
    calls, ...) and ``# pragma: no mutate`` comments are honoured via mutmut's ``PragmaVisitor``.
    A mutation is spliced with mutmut's ``deep_replace(module, original_node, mutated_node)``
    and rendered with ``Module.code``. mutmut's ``create_mutations`` is not called because it
    reads ``[tool.mutmut] do_not_mutate`` from the current directory's pyproject.toml
    (``get_lines_ignored_by_pattern``), which would make results depend on the cwd (and in a
    directory without a guessable source tree mutmut's ``config()`` raises).

Caveats, inherited from the tools and kept as they are:
    * CR-core/ExceptionReplacer rewrites ``except E:`` to ``except CosmicRayTestingException:``;
      the name is not defined in the target module, so a run that reaches that handler raises
      NameError unless the executor injects ``cosmic_ray.exceptions.CosmicRayTestingException``.
    * CR-core/NumberReplacer computes the new literal with ``eval`` of the number token (a
      literal such as ``0`` or ``4.2``, never target code).
    * Importing ``cosmic_ray.plugins`` lets stevedore refresh its entry-point cache
      (``~/.cache/python-entrypoints``) once, if absent; the bridge operators themselves
      never touch files.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cosmic_ray.plugins
import libcst as cst
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from libcst.metadata import MetadataWrapper
from mutmut.mutation import mutators as mm
from mutmut.mutation.file_mutation import Mutation, MutationVisitor, deep_replace
from mutmut.mutation.pragma_handling import IgnoredCode, PragmaVisitor

from harness.mutation.model import Arm, Operator, OperatorExample, SiteContext

Position = tuple[tuple[int, int], tuple[int, int]]
NodeOperator = tuple[type, Callable[[Any], Iterable[cst.CSTNode]]]

# --------------------------------------------------------------------------------------------
# Cosmic Ray
# --------------------------------------------------------------------------------------------

# Cosmic Ray operators whose class declares ``arguments()`` cannot be instantiated without a
# per-session parameterisation (``cosmic_ray.commands.init._operators`` only instantiates them
# from operator_cfgs). In cosmic-ray 8.7.0 these are core/VariableReplacer and
# core/VariableInserter: both need ``cause_variable`` (and ``effect_variable``) naming a
# variable of the code under test, and both draw a random number / operator in ``mutate``
# (``random.randint`` / ``random.choice``), so they are neither argument-free nor deterministic.
# They are skipped. core/NoOp is not listed by the provider at all (it is only served by name
# for Cosmic Ray's baseline run), so it is not bridged either.
CR_NEEDS_ARGUMENTS = "operator class declares arguments()"


def _cosmic_ray_catalogue() -> tuple[dict[str, type], dict[str, str]]:
    """(bridged operator classes by Cosmic Ray name, skipped Cosmic Ray names -> reason)."""
    names = cosmic_ray.plugins.operator_names()
    if not names:
        # plugins.py only logs a provider that fails to load; an empty catalogue would silently
        # drop the whole Cosmic Ray arm.
        raise RuntimeError(
            "Cosmic Ray lists no operators: its 'cosmic_ray.operator_providers' entry point "
            "failed to load (see the logged error; a local directory named 'ast' shadowing "
            "the standard library is a known cause)"
        )
    bridged: dict[str, type] = {}
    skipped: dict[str, str] = {}
    for cr_name in names:
        operator_class = cosmic_ray.plugins.get_operator(cr_name)
        if operator_class.arguments():
            skipped[cr_name] = CR_NEEDS_ARGUMENTS
        else:
            bridged[cr_name] = operator_class
    return bridged, skipped


@lru_cache(maxsize=64)
def _parso_nodes(source: str) -> tuple[Any, ...]:
    """All parso nodes of `source` in Cosmic Ray's walk order (pre-order). Read-only: the
    tree is shared between operators for counting; mutation always re-parses."""
    return tuple(ast_nodes(get_ast(source)))


@dataclass(frozen=True)
class CosmicRayOperator:
    """One Cosmic Ray operator (argument-free) behind the harness Operator interface."""

    name: str
    cosmic_ray_name: str
    operator_class: type
    arm: Arm = Arm.OPEN_WORLD
    defect_class: None = None

    @property
    def examples(self) -> tuple[OperatorExample, ...]:
        """Cosmic Ray's own examples of the operator (those without operator arguments),
        each as the body of one function; one whose text does not change is a near miss."""
        return tuple(
            OperatorExample(
                before=_as_function(e.pre_mutation_code),
                after=None
                if e.post_mutation_code == e.pre_mutation_code
                else _as_function(e.post_mutation_code),
                occurrence=e.occurrence,
            )
            for e in self.operator_class.examples()
            if not e.operator_args
        )

    def positions(self, source: str) -> list[Position]:
        """Cosmic Ray's ``(start, end)`` position of every occurrence, in occurrence order."""
        operator = self.operator_class()
        return [
            (start, end)
            for node in _parso_nodes(source)
            for start, end in operator.mutation_positions(node)
        ]

    def occurrences(self, source: str, context: SiteContext) -> int:
        return len(self.positions(source))

    def mutate(self, source: str, context: SiteContext, occurrence: int) -> str:
        if occurrence < 0:
            raise IndexError(f"{self.name}: negative occurrence {occurrence}")
        mutated = mutate_code(source, self.operator_class(), occurrence)
        if mutated is None:
            raise IndexError(f"{self.name}: no occurrence {occurrence} in this function")
        return mutated


def _as_function(code: str) -> str:
    return "def example():\n" + textwrap.indent(code.rstrip("\n") + "\n", "    ")


def _build_cosmic_ray_operators() -> tuple[dict[str, CosmicRayOperator], dict[str, str]]:
    bridged, skipped = _cosmic_ray_catalogue()
    operators = {
        f"CR-{cr_name}": CosmicRayOperator(
            name=f"CR-{cr_name}", cosmic_ray_name=cr_name, operator_class=operator_class
        )
        for cr_name, operator_class in bridged.items()
    }
    return operators, skipped


COSMIC_RAY_OPERATORS, COSMIC_RAY_SKIPPED = _build_cosmic_ray_operators()

# --------------------------------------------------------------------------------------------
# mutmut
# --------------------------------------------------------------------------------------------

# mutmut 3.8.1's ``mutation_operators`` table, partitioned by the kind of change. Node types
# are those of mutmut's table, except that ``operator_swap_op`` (registered on every node) is
# split by the node it rewrites: on augmented assignments it is bridged (Cosmic Ray never
# touches ``+=``: parso gives it one operator leaf ``+=``, which no binary-operator replacement
# matches); on binary, unary, boolean and comparison operators Cosmic Ray already makes the
# same changes (and more).
MM_CATEGORIES: dict[str, tuple[NodeOperator, ...]] = {
    # "abc" -> "XXabcXX", "ABC", "abc" (triple-quoted strings and f-strings are left alone)
    "string": ((cst.BaseString, mm.operator_string),),
    # f(a, b) -> f(None, b), f(a, None), f(b), f(a)
    "call_arg": ((cst.Call, mm.operator_arg_removal),),
    # x = y -> x = None; x = None -> x = ""
    "assign_none": (
        (cst.Assign, mm.operator_assignment),
        (cst.AnnAssign, mm.operator_assignment),
    ),
    # dict(a=b) -> dict(aXX=b)
    "dict_kwarg": ((cst.Call, mm.operator_dict_arguments),),
    # s.lower() -> s.upper(), lstrip/rstrip, find/rfind, split/rsplit (with maxsplit), ...
    "str_method": (
        (cst.Call, mm.operator_symmetric_string_methods_swap),
        (cst.Call, mm.operator_unsymmetrical_string_methods_swap),
    ),
    # x += y -> x = y
    "augassign_to_assign": ((cst.AugAssign, mm.operator_augmented_assignment),),
    # x += y -> x -= y, *= -> /=, ...
    "augassign_op": ((cst.AugAssign, mm.operator_swap_op),),
    # in <-> not in, is <-> is not, break -> return, continue -> break
    "keyword": ((cst.CSTNode, mm.operator_keywords),),
    # True <-> False, deepcopy -> copy
    "name": ((cst.Name, mm.operator_name),),
    # lambda: x -> lambda: None
    "lambda": ((cst.Lambda, mm.operator_lambda),),
    # drop one `case` of a match
    "match_case": ((cst.Match, mm.operator_match),),
    # a if c else b -> a if (c) and False else b / a if (c) or True else b
    "if_exp": ((cst.IfExp, mm.operator_if_exp),),
}

# Not bridged: every mutant of these is already made by a Cosmic Ray operator
# (NumberReplacer's +1; ReplaceBinaryOperator_*, ReplaceComparisonOperator_*,
# ReplaceAndWithOr/ReplaceOrWithAnd, ReplaceUnaryOperator_*), so bridging them would only
# duplicate open-world mutants.
MM_COVERED_BY_COSMIC_RAY: dict[str, tuple[NodeOperator, ...]] = {
    "number": ((cst.BaseNumber, mm.operator_number),),
    "unary_removal": ((cst.UnaryOperation, mm.operator_remove_unary_ops),),
    "swap_op": (
        (cst.BinaryOperation, mm.operator_swap_op),
        (cst.UnaryOperation, mm.operator_swap_op),
        (cst.BooleanOperation, mm.operator_swap_op),
        (cst.ComparisonTarget, mm.operator_swap_op),
    ),
}


def _strip_site_decorators(module: cst.Module) -> tuple[cst.Module, dict[int, Sequence[Any]]]:
    """Remove the decorators of the top-level def(s), remembering them by statement index.

    mutmut skips a decorated function entirely (``_skip_node_and_children``), for reasons that
    are about its trampolines (copying the def re-runs the decorator). We splice one function in
    memory, so those reasons do not apply; the decorators themselves stay unmutated, as mutmut
    never mutates a ``Decorator`` node either."""
    decorators: dict[int, Sequence[Any]] = {}
    body = list(module.body)
    for index, statement in enumerate(body):
        if isinstance(statement, cst.FunctionDef) and statement.decorators:
            decorators[index] = statement.decorators
            body[index] = statement.with_changes(decorators=())
    return module.with_changes(body=body), decorators


def _restore_site_decorators(
    module: cst.Module, decorators: dict[int, Sequence[Any]]
) -> cst.Module:
    if not decorators:
        return module
    body = list(module.body)
    for index, saved in decorators.items():
        body[index] = body[index].with_changes(decorators=saved)
    return module.with_changes(body=body)


@lru_cache(maxsize=512)
def _mutmut_mutations(
    source: str, category: str
) -> tuple[cst.Module, dict[int, Sequence[Any]], tuple[Mutation, ...]]:
    """mutmut's mutations of `source` for one category, in mutmut's visit order.
    libcst trees are immutable, so the cached result is safe to share."""
    module, decorators = _strip_site_decorators(cst.parse_module(source))
    wrapper = MetadataWrapper(module)
    pragmas = PragmaVisitor("<function>")
    wrapper.visit(pragmas)
    ignored = IgnoredCode(
        no_mutate_lines=pragmas.no_mutate_lines,
        ignore_node_lines=pragmas.ignore_node_lines,
        ignore_pattern_lines=set(),  # config-driven (pyproject.toml in the cwd): not used
    )
    visitor = MutationVisitor(MM_CATEGORIES[category], ignored, covered_lines=None)
    wrapper.visit(visitor)
    return wrapper.module, decorators, tuple(visitor.mutations)


@dataclass(frozen=True)
class MutmutOperator:
    """One category of mutmut's node operators behind the harness Operator interface."""

    name: str
    category: str
    arm: Arm = Arm.OPEN_WORLD
    defect_class: None = None

    @property
    def examples(self) -> tuple[OperatorExample, ...]:
        before, after = MM_EXAMPLES[self.category]
        return (OperatorExample(before=before, after=after),)

    def occurrences(self, source: str, context: SiteContext) -> int:
        return len(_mutmut_mutations(source, self.category)[2])

    def mutate(self, source: str, context: SiteContext, occurrence: int) -> str:
        module, decorators, mutations = _mutmut_mutations(source, self.category)
        if not 0 <= occurrence < len(mutations):
            raise IndexError(f"{self.name}: no occurrence {occurrence} in this function")
        mutation = mutations[occurrence]
        mutated = deep_replace(module, mutation.original_node, mutation.mutated_node)
        assert isinstance(mutated, cst.Module)
        return _restore_site_decorators(mutated, decorators).code


# One (before, after) per category, the first occurrence: what each category rewrites.
MM_EXAMPLES: dict[str, tuple[str, str]] = {
    "assign_none": (
        "def f(x):\n    y = x + 1\n    return y\n",
        "def f(x):\n    y = None\n    return y\n",
    ),
    "dict_kwarg": ("def f(x):\n    return dict(a=x)\n", "def f(x):\n    return dict(aXX=x)\n"),
    "str_method": (
        "def f(name):\n    return name.lower()\n",
        "def f(name):\n    return name.upper()\n",
    ),
    "keyword": ("def f(x):\n    return x is None\n", "def f(x):\n    return x is not None\n"),
    "name": ("def f():\n    return True\n", "def f():\n    return False\n"),
    "lambda": ("def f():\n    return lambda x: x\n", "def f():\n    return lambda x: None\n"),
    "match_case": (
        "def f(x):\n    match x:\n        case 1:\n            return 'one'\n"
        "        case _:\n            return 'other'\n",
        "def f(x):\n    match x:\n        case _:\n            return 'other'\n",
    ),
    "if_exp": (
        "def f(x):\n    return 1 if x else 2\n",
        "def f(x):\n    return 1 if (x) and False else 2\n",
    ),
    "string": ("def f():\n    return 'ok'\n", "def f():\n    return 'XXokXX'\n"),
    "call_arg": ("def f(x):\n    return g(x, 1)\n", "def f(x):\n    return g(None, 1)\n"),
    "augassign_to_assign": (
        "def f(x):\n    x += 1\n    return x\n",
        "def f(x):\n    x = 1\n    return x\n",
    ),
    "augassign_op": (
        "def f(x):\n    x += 1\n    return x\n",
        "def f(x):\n    x -= 1\n    return x\n",
    ),
}

MUTMUT_OPERATORS: dict[str, MutmutOperator] = {
    f"MM-{category}": MutmutOperator(name=f"MM-{category}", category=category)
    for category in MM_CATEGORIES
}

# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------

OPEN_WORLD_OPERATORS: dict[str, Operator] = {**COSMIC_RAY_OPERATORS, **MUTMUT_OPERATORS}


def register_open_world(register: Callable[[Operator], None]) -> None:
    """Register every bridge operator (Cosmic Ray first, then mutmut) via `register`."""
    for operator in OPEN_WORLD_OPERATORS.values():
        register(operator)

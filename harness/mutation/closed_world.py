"""Closed-world operators: one defect class each, as stdlib-`ast` transforms of one function
(the six of DESIGN.md, and M-VALIDITY / M-INTEGRITY on the checks of observation clauses).

Every operator is a small `AstOperator` (`harness.mutation.ast_operator`): `candidates`
lists the places it can act on, in source order and at any nesting depth (loops, try, with,
if), and `transform` changes one of them in a fresh parse of the function; `render` writes
the change back into the original text, so a mutant's diff shows only its change.

What counts as a state write, a guard (raising, or returning a refusal: see
`harness.mutation.refusals`) or a fresh local is defined once, in `harness.mutation.sites`,
and what counts as an integrity or validity check in `harness.mutation.checks`; writes of
volatile state only (`SiteContext.volatile_fields`) are not state writes for M-PHANTOM,
M-PARTIAL and M-INVAR (see `context_writes`).
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from harness.defects import DefectClass
from harness.mutation.ast_operator import (
    AstOperator,
    body_start,
    render,
    replace_statement,
    statement_slots,
)
from harness.mutation.checks import (
    Check,
    integrity_checks,
    inverted,
    replace_expression,
    shifted,
    validity_checks,
)
from harness.mutation.model import TRANSFER, WITHDRAW, Arm, SiteContext, example
from harness.mutation.sites import (
    FunctionNode,
    Guard,
    StateWrite,
    WriteCall,
    guards,
    is_guard,
    own_statements,
    parameter_names,
    returns_value,
    state_writes,
    statements_in,
)

# --- shared transforms ------------------------------------------------------------------------


def _deepcopy_of(expr: ast.expr) -> ast.expr:
    """`__import__("copy").deepcopy(expr)`: no import is added to the target module."""
    module = ast.Call(ast.Name("__import__", ast.Load()), [ast.Constant("copy")], [])
    return ast.Call(ast.Attribute(module, "deepcopy", ast.Load()), [expr], [])


def shadow_call(hit: WriteCall) -> None:
    """Run a write call on a deep copy of what it would change, so it returns what it
    would have returned and the state stays as it was: the receiver of a method, the first
    argument of an in-place function, every non-constant argument of a writer function."""
    call = hit.call
    if isinstance(call.func, ast.Attribute) and hit.kind != "in_place":
        call.func = ast.Attribute(_deepcopy_of(call.func.value), call.func.attr, ast.Load())
    elif hit.kind == "in_place":
        call.args[0] = _deepcopy_of(call.args[0])
    else:
        call.args = [a if isinstance(a, ast.Constant) else _deepcopy_of(a) for a in call.args]
        call.keywords = [
            ast.keyword(
                k.arg, k.value if isinstance(k.value, ast.Constant) else _deepcopy_of(k.value)
            )
            for k in call.keywords
        ]


def neutralize(fn: FunctionNode, write: StateWrite) -> None:
    """Remove one state write: `pass` for an assignment or a write-call statement; for a
    statement that uses a write call's value, shadow the call (see `shadow_call`)."""
    if write.kind == "value":
        for hit in write.calls:
            shadow_call(hit)
    else:
        replace_statement(fn, write.statement, [ast.Pass()])


def _as_load(expr: ast.expr) -> ast.expr:
    copied = copy.deepcopy(expr)
    for node in ast.walk(copied):
        if hasattr(node, "ctx"):
            node.ctx = ast.Load()
    return copied


def context_writes(fn: FunctionNode, context: SiteContext) -> list[StateWrite]:
    """The function's state writes as the operators see them: calls of the context's
    writers count, and writes of volatile fields only do not (a helper that only writes
    volatile fields, like a clock stamp, is not among the writers either), since every
    comparison masks volatile paths and removing such a write changes nothing observable."""
    return state_writes(fn, context.writer_names, context.volatile_fields)


# --- the six closed-world operators -------------------------------------------------------------


class PhantomEffect(AstOperator):
    """M-PHANTOM: every state write of the function removed, its success return kept.

    One occurrence per function with at least one state write that is the tool function
    itself or returns a value. Assignments and write-call statements become `pass`. A
    statement that uses a write call's value (`record = bank._record_transfer(...)`,
    `return self.items.pop(k)`) gets that value from a deep copy instead: right before it,
    `bank_copy = __import__("copy").deepcopy(bank)` (the root variable of the receiver), the
    call runs on `bank_copy`, and the function's later reads of `bank` read `bank_copy`, so
    what it returns has the shape and values of a real success while nothing persists (the
    "effect went to a copy" bug). Writer functions called by name, in-place functions, and
    roots rebound later get the inline copy of `shadow_call` instead.
    """

    name = "M-PHANTOM"
    arm = Arm.CLOSED_WORLD
    defect_class = DefectClass.PHANTOM_EFFECT
    examples = (
        example(
            WITHDRAW,
            """\
def withdraw(bank, account, amount):
    if amount > bank.balances[account]:
        raise ValueError("insufficient funds")
    pass
    return "ok"
""",
            injected=["bank"],
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        writes = context_writes(fn, context)
        if writes and (context.is_tool_function or returns_value(fn)):
            return [None]
        return []

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        writes = context_writes(fn, context)
        for write in writes:
            if write.kind != "value":
                replace_statement(fn, write.statement, [ast.Pass()])
        copies: dict[str, str] = {}  # root variable -> its copy
        for write in writes:
            if write.kind == "value":
                for hit in write.calls:
                    if not self._redirect(fn, write.statement, hit, copies):
                        shadow_call(hit)

    @staticmethod
    def _redirect(
        fn: FunctionNode, statement: ast.stmt, hit: WriteCall, copies: dict[str, str]
    ) -> bool:
        receiver = hit.call.func.value if isinstance(hit.call.func, ast.Attribute) else None
        root = _root_node(receiver) if receiver is not None and hit.kind != "in_place" else None
        if root is None:
            return False
        if root.id in copies.values():  # already redirected by an earlier write
            return True
        after = (statement.end_lineno, statement.end_col_offset)
        later = [
            n
            for n in ast.walk(fn)
            if isinstance(n, ast.Name) and n.id == root.id and hasattr(n, "lineno")
            if (n.lineno, n.col_offset) >= after
        ]
        if any(not isinstance(n.ctx, ast.Load) for n in later):
            return False  # the root is rebound later: a copy would outlive its meaning
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | set(parameter_names(fn))
        name = f"{root.id}_copy"
        while name in used:
            name += "_"
        copy_statement = ast.Assign([ast.Name(name, ast.Store())], _deepcopy_of(_as_load(root)))
        block, index = statement_slots(fn)[id(statement)]
        block.insert(index, copy_statement)
        copies[root.id] = name
        for node in [root, *later]:
            node.id = name
        return True


def _root_node(expr: ast.expr) -> ast.Name | None:
    """The Name node at the bottom of `a.b[c].d` or `a.get(k).e`."""
    while isinstance(expr, ast.Attribute | ast.Subscript | ast.Call):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr if isinstance(expr, ast.Name) else None


class UnenforcedPrecondition(AstOperator):
    """M-PRECOND: per guard (`sites.Guard`: `if COND: ... raise ...`, `if COND: ... return
    <refusal>`, or the accepting form `if COND: return <ok>` with a refusal after it), two
    occurrences: the guard removed (a refusing guard gives way to its `else` branch, if
    any; an accepting guard to its body, so the call is always accepted), and COND negated
    (`not (COND)`)."""

    name = "M-PRECOND"
    arm = Arm.CLOSED_WORLD
    defect_class = DefectClass.UNENFORCED_PRECONDITION
    examples = (
        example(
            WITHDRAW,
            """\
def withdraw(bank, account, amount):
    pass
    bank.balances[account] -= amount
    return "ok"
""",
            injected=["bank"],
        ),
    )
    per_candidate = 2

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        return guards(fn, context.refusal_returns)

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        if variant == 0:
            remove_guard(fn, candidate)
        else:
            candidate.node.test = ast.UnaryOp(ast.Not(), candidate.node.test)


def remove_guard(fn: FunctionNode, guard: Guard) -> None:
    """The guard gone: a refusing guard replaced by its `else` branch, an accepting one by
    its body."""
    node = guard.node
    replace_statement(fn, node, list(node.orelse if guard.refuses_in_body else node.body))


def stand_in(fn: FunctionNode, parameter: str, injected: frozenset[str]) -> ast.expr:
    """The value an ignored argument is replaced by: its default when it has one, else by
    annotation: `int` 1, `float` 1.0, `bool` False, `str` the first other `str` parameter
    (not injected) or "", list/dict/set/tuple empty, an optional (`X | None`) None, and
    None for anything else."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: dict[str, ast.expr] = {
        a.arg: d
        for a, d in zip(
            positional[len(positional) - len(args.defaults) :], args.defaults, strict=True
        )
    }
    defaults.update(
        {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
    )
    if parameter in defaults:
        return copy.deepcopy(defaults[parameter])
    annotations = {a.arg: a.annotation for a in [*positional, *args.kwonlyargs]}
    annotation = annotations.get(parameter)
    text = ast.unparse(annotation).replace(" ", "") if annotation is not None else ""
    if "None" in text.split("|") or text.startswith(("Optional[", "typing.Optional[")):
        return ast.Constant(None)
    base = text.partition("[")[0].rpartition(".")[2]
    if base == "str":
        for other in parameter_names(fn):
            other_annotation = annotations.get(other)
            if (
                other not in (parameter, *injected)
                and other_annotation is not None
                and ast.unparse(other_annotation) == "str"
            ):
                return ast.Name(other, ast.Load())
        return ast.Constant("")
    simple: dict[str, ast.expr] = {
        "int": ast.Constant(1),
        "float": ast.Constant(1.0),
        "bool": ast.Constant(False),
        "list": ast.List([], ast.Load()),
        "List": ast.List([], ast.Load()),
        "dict": ast.Dict([], []),
        "Dict": ast.Dict([], []),
        "tuple": ast.Tuple([], ast.Load()),
        "set": ast.Call(ast.Name("set", ast.Load()), [], []),
    }
    return simple.get(base, ast.Constant(None))


def _reads(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in ast.walk(node)
    )


class IgnoredArgument(AstOperator):
    """M-IGNARG: per effective argument of the tool that is a parameter of this function,
    the argument no longer reaches the state: right after the last top-level statement that
    holds a guard reading it (or after the docstring), it is rebound to `stand_in`, so the
    guards still see the real value. Skipped when nothing after that point reads it."""

    name = "M-IGNARG"
    arm = Arm.CLOSED_WORLD
    defect_class = DefectClass.IGNORED_ARGUMENT
    examples = (
        example(
            WITHDRAW,
            """\
def withdraw(bank, account, amount):
    if amount > bank.balances[account]:
        raise ValueError("insufficient funds")
    account = None
    bank.balances[account] -= amount
    return "ok"
""",
            injected=["bank"],
            effective_arguments=["account", "amount"],
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        found = []
        for parameter in parameter_names(fn):
            if parameter not in context.effective_arguments or parameter in context.injected:
                continue
            at = self._insertion_index(fn, parameter, context.refusal_returns)
            if any(_reads(stmt, parameter) for stmt in fn.body[at:]):
                found.append(parameter)
        return found

    @staticmethod
    def _insertion_index(
        fn: FunctionNode, parameter: str, refusals: frozenset[str] = frozenset()
    ) -> int:
        at = body_start(fn)
        for index, stmt in enumerate(fn.body):
            if any(_reads(g.test, parameter) for g in _guards_in(stmt, refusals)):
                at = index + 1
        return at

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        rebind = ast.Assign(
            [ast.Name(candidate, ast.Store())], stand_in(fn, candidate, context.injected)
        )
        fn.body.insert(self._insertion_index(fn, candidate, context.refusal_returns), rebind)


def _guards_in(stmt: ast.stmt, refusals: frozenset[str] = frozenset()) -> list[ast.If]:
    return [s for s in statements_in([stmt]) if is_guard(s, refusals)]


class PartialEffect(AstOperator):
    """M-PARTIAL: in a function with two or more state writes (writer-helper calls
    included, writes of volatile state only not: see `context_writes`), one of them removed
    (see `neutralize`); one occurrence per write."""

    name = "M-PARTIAL"
    arm = Arm.CLOSED_WORLD
    defect_class = DefectClass.PARTIAL_EFFECT
    examples = (
        example(
            TRANSFER,
            """\
def transfer(bank, src, dst, amount):
    pass
    bank.balances[dst] += amount
    return "done"
""",
            injected=["bank"],
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        writes = context_writes(fn, context)
        return list(range(len(writes))) if len(writes) >= 2 else []

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        neutralize(fn, context_writes(fn, context)[candidate])


class InvariantBreak(AstOperator):
    """M-INVAR: per state write whose target names an attribute or key the contract's
    invariants read (anywhere along `a.b[k].c`), that write undone: an augmented assignment
    becomes the self-assignment `t = t` (a no-op of any type), any other write is removed
    (write calls whose value is used are shadowed, see `shadow_call`)."""

    name = "M-INVAR"
    arm = Arm.CLOSED_WORLD
    defect_class = DefectClass.INVARIANT_BREAK
    examples = (
        example(
            TRANSFER,
            """\
def transfer(bank, src, dst, amount):
    bank.balances[src] = bank.balances[src]
    bank.balances[dst] += amount
    return "done"
""",
            injected=["bank"],
            invariant_fields=["balances"],
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        return [
            index
            for index, write in enumerate(context_writes(fn, context))
            if write.fields & context.invariant_fields
        ]

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        write = context_writes(fn, context)[candidate]
        statement = write.statement
        if isinstance(statement, ast.AugAssign):
            no_op = ast.Assign([statement.target], _as_load(statement.target))
            replace_statement(fn, statement, [no_op])
        elif write.kind == "value":
            for hit in write.calls:
                if hit.fields & context.invariant_fields:
                    shadow_call(hit)
        else:
            replace_statement(fn, statement, [ast.Pass()])


class ResetLeak(AstOperator):
    """M-RESET: on a function of the reset path only, one reset step removed: an
    assignment to an attribute or subscript, or a call statement (`self.bank.reset()`,
    `self.items.clear()`); one occurrence per step."""

    name = "M-RESET"
    arm = Arm.CLOSED_WORLD
    defect_class = DefectClass.RESET_LEAK
    examples = (
        example(
            """\
def reset(self):
    self.balances.clear()
""",
            """\
def reset(self):
    pass
""",
            is_tool_function=False,
            is_reset=True,
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        if not context.is_reset:
            return []
        steps = []
        for stmt in own_statements(fn):
            if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if stmt.value is not None and any(
                    isinstance(t, ast.Attribute | ast.Subscript) for t in targets
                ):
                    steps.append(stmt)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                steps.append(stmt)
        return steps

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        replace_statement(fn, candidate, [ast.Pass()])


# --- observation checks -------------------------------------------------------------------


class _CheckOperator(AstOperator):
    """Per check (`harness.mutation.checks`), up to three occurrences, in this order:
    - drop: the check no longer refuses anything. When it is a guard's whole test, the guard
      is removed (`remove_guard`); otherwise the comparison becomes its passing value
      (`True`/`False`), when that is known;
    - invert: the comparison's opposite (`==` -> `!=`, `<` -> `>=`; a call loses the `not`
      in front of it, or gains one);
    - shift: a strict/non-strict boundary moved (`<` <-> `<=`, `>` <-> `>=`), for
      ordering comparisons."""

    def checks(self, fn: FunctionNode, context: SiteContext) -> list[Check]:
        raise NotImplementedError

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        found: list[Any] = []
        for check in self.checks(fn, context):
            if (check.whole and check.guard is not None) or check.passes is not None:
                found.append((check, "drop"))
            found.append((check, "invert"))
            if shifted(check.node) is not None:
                found.append((check, "shift"))
        return found

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        check, kind = candidate
        if kind == "drop" and check.whole and check.guard is not None:
            remove_guard(fn, check.guard)
            return
        if kind == "drop":
            new: ast.expr = ast.Constant(check.passes)
        elif kind == "invert":
            negation = _negation_of(check.place, check.node)
            if negation is not None and not isinstance(check.node, ast.Compare):
                replace_expression(check.place, negation, check.node)  # `not f()` -> `f()`
                return
            new = inverted(check.node)
        else:
            new = shifted(check.node)  # type: ignore[assignment]
        replace_expression(check.place, check.node, new)


def _negation_of(root: ast.AST, node: ast.expr) -> ast.UnaryOp | None:
    for parent in ast.walk(root):
        if (
            isinstance(parent, ast.UnaryOp)
            and isinstance(parent.op, ast.Not)
            and parent.operand is node
        ):
            return parent
    return None


class ValidityBreak(_CheckOperator):
    """M-VALIDITY: the validity checks of the function (comparisons reading the clock of
    the tool's observation clauses, `SiteContext.clock_fields`, or a `now` / `time()`
    value; in a guard, a returned boolean or a local they read), each dropped, inverted
    and, for an ordering comparison, its boundary shifted: an expiry honoured one tick late,
    a Retry-After window one tick long."""

    name = "M-VALIDITY"
    arm = Arm.CLOSED_WORLD
    defect_class = DefectClass.VALIDITY_BREAK
    examples = (
        example(
            """\
def redeem(store, token):
    if store.now > token.expires_at:
        raise ValueError("expired")
    store.used.add(token.id)
    return "redeemed"
""",
            """\
def redeem(store, token):
    pass
    store.used.add(token.id)
    return "redeemed"
""",
            injected=["store"],
            clock_fields=["now"],
        ),
    )

    def checks(self, fn: FunctionNode, context: SiteContext) -> list[Check]:
        return validity_checks(fn, context.refusal_returns, context.clock_fields)


class IntegrityBreak(_CheckOperator):
    """M-INTEGRITY: the integrity checks of the function (`compare_digest`, or `==` / `!=`
    of a digest or signature against an argument or state value; in a guard, a returned
    boolean or a local they read), each dropped and inverted."""

    name = "M-INTEGRITY"
    arm = Arm.CLOSED_WORLD
    defect_class = DefectClass.INTEGRITY_BREAK
    examples = (
        example(
            """\
def verify(store, payload, signature):
    if not hmac.compare_digest(sign(payload), signature):
        raise ValueError("bad signature")
    store.accepted.append(payload)
    return "accepted"
""",
            """\
def verify(store, payload, signature):
    pass
    store.accepted.append(payload)
    return "accepted"
""",
            injected=["store"],
        ),
    )

    def checks(self, fn: FunctionNode, context: SiteContext) -> list[Check]:
        return integrity_checks(fn, context.refusal_returns)


CLOSED_WORLD_OPERATORS: tuple[AstOperator, ...] = (
    PhantomEffect(),
    UnenforcedPrecondition(),
    IgnoredArgument(),
    PartialEffect(),
    InvariantBreak(),
    ResetLeak(),
    ValidityBreak(),
    IntegrityBreak(),
)

# `AstOperator` and `render` live in harness.mutation.ast_operator; listed here for their old
# import path
__all__ = [
    "CLOSED_WORLD_OPERATORS",
    "AstOperator",
    "IgnoredArgument",
    "IntegrityBreak",
    "InvariantBreak",
    "PartialEffect",
    "PhantomEffect",
    "ResetLeak",
    "UnenforcedPrecondition",
    "ValidityBreak",
    "context_writes",
    "neutralize",
    "remove_guard",
    "render",
    "shadow_call",
    "stand_in",
]

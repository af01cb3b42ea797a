"""Refusal by return and observation checks in any form (issue 18): every refusal form is a
guard for M-PRECOND, every form of a digest or clock comparison a check for M-INTEGRITY /
M-VALIDITY, and the return-refusal toy service (`toy_domain.vouchers`) offers all three."""

from __future__ import annotations

import ast
import textwrap

import pytest

from harness.checker import ReferenceChecker, compile_target
from harness.checker.verdicts import Verdict
from harness.contracts.model import SuccessSignal
from harness.mutation.apply import applied
from harness.mutation.closed_world import IntegrityBreak, UnenforcedPrecondition, ValidityBreak
from harness.mutation.enumerate import enumerate_pairs
from harness.mutation.model import SiteContext
from harness.mutation.refusals import is_refusal_return, judges, refusal_returns, success_judge
from harness.mutation.sites import guards, parse_function
from harness.targets.adapter import default_is_refusal
from harness.targets.registry import load_target

TARGET = load_target("toy_domain")
VOUCHER_TOOLS = ["issue_voucher", "redeem_voucher", "advance_voucher_clock"]


class _Plain:
    """An adapter without `is_refusal`: the default shapes apply."""


class _Strings:
    def is_refusal(self, value):
        return isinstance(value, str) and value.startswith("NO:")


def context_for(source: str, adapter=None, contract=None, tool=True, **extra) -> SiteContext:
    fn = parse_function(textwrap.dedent(source))
    refusals = refusal_returns(fn, judges(adapter or _Plain(), contract, tool))
    return SiteContext(
        tool="t", is_tool_function=tool, is_reset=False, refusal_returns=refusals, **extra
    )


def mutants(operator, source: str, context: SiteContext) -> list[str]:
    text = textwrap.dedent(source)
    return [operator.mutate(text, context, i) for i in range(operator.occurrences(text, context))]


@pytest.mark.parametrize(
    ("returned", "refuses"),
    [
        ("False, 'expired'", True),
        ("(False, f'expired at {t}')", True),
        ("{'error': f'no such {key}'}", True),
        ("{'errors': [msg]}", True),
        ("'Error: no such file'", True),
        ("f'error: {path} is missing'", True),
        ("False", True),
        ("True, ''", False),
        ("ok, reason", False),  # unknown first item: no opinion
        ("{'id': new_id}", False),
        ("result", False),
        ("'done'", False),
    ],
)
def test_default_refusal_shapes(returned: str, refuses: bool) -> None:
    expr = ast.parse(returned, mode="eval").body
    assert is_refusal_return(expr, judges(_Plain(), None, True)) is refuses


def test_default_is_refusal_has_no_opinion_on_other_values() -> None:
    assert default_is_refusal({"ok": True}) is None
    assert default_is_refusal([True, "x"]) is None
    assert default_is_refusal(False) is True


def test_the_success_signal_classifies_the_tool_functions_returns_first() -> None:
    signal = SuccessSignal(signal="result", predicate="result.status == 'ok'", inferred=True)
    contract = type("C", (), {"success": signal})()
    judge = success_judge(contract)  # type: ignore[arg-type]
    assert judge is not None
    expr = ast.parse("{'status': 'denied', 'why': why}", mode="eval").body
    assert is_refusal_return(expr, judges(_Plain(), contract, True))  # type: ignore[arg-type]
    # not for a helper: the contract speaks of the tool's result only
    assert not is_refusal_return(expr, judges(_Plain(), contract, False))  # type: ignore[arg-type]


def test_the_adapter_hook_classifies_returns() -> None:
    expr = ast.parse("'NO: closed'", mode="eval").body
    assert is_refusal_return(expr, judges(_Strings(), None, False))
    assert not is_refusal_return(expr, judges(_Plain(), None, False))


REFUSING = """
def verify(store, token):
    if token not in store.issued:
        return False, "unknown"
    if store.revoked:
        return {"error": "revoked"}
    if not token:
        raise ValueError("missing")
    return True, token
"""

ACCEPTING = """
def verify(store, token):
    if token in store.issued:
        return True, token
    return False, "unknown"
"""

ACCEPTING_ELSE = """
def verify(store, token):
    if token in store.issued:
        return True, token
    else:
        return False, "unknown"
"""


def test_every_refusing_form_is_a_guard() -> None:
    context = context_for(REFUSING)
    found = guards(parse_function(textwrap.dedent(REFUSING)), context.refusal_returns)
    assert [g.refuses_in_body for g in found] == [True, True, True]
    texts = mutants(UnenforcedPrecondition(), REFUSING, context)
    assert len(texts) == 6
    assert 'return False, "unknown"' not in texts[0]  # the first guard removed
    assert "if not (token not in store.issued):" in texts[1]


@pytest.mark.parametrize("source", [ACCEPTING, ACCEPTING_ELSE])
def test_an_early_return_of_the_ok_value_is_a_guard_when_its_refusal_is_a_return(
    source: str,
) -> None:
    context = context_for(source)
    (guard,) = guards(parse_function(textwrap.dedent(source)), context.refusal_returns)
    assert not guard.refuses_in_body
    removed, negated = mutants(UnenforcedPrecondition(), source, context)
    assert "if token in store.issued" not in removed  # always accepted
    assert "return (True, token)" in removed or "return True, token" in removed
    assert "if not (token in store.issued):" in negated


def test_an_early_ok_return_without_a_refusal_after_it_is_no_guard() -> None:
    source = """
    def lookup(store, key):
        if key in store.cache:
            return store.cache[key]
        return store.load(key)
    """
    assert mutants(UnenforcedPrecondition(), source, context_for(source)) == []


INTEGRITY_FORMS = {
    "compare_digest guard": """
    def check(key, body, sig):
        if not hmac.compare_digest(sign(body), sig):
            return False, "signature_mismatch"
        return True, ""
    """,
    "secrets.compare_digest returned": """
    def check(key, body, sig):
        return secrets.compare_digest(hmac.new(key, body, "sha256").hexdigest(), sig)
    """,
    "== returned": """
    def check(body, sig):
        return hashlib.sha256(body).hexdigest() == sig
    """,
    "!= guard through a local": """
    def check(store, etag):
        expected = store.item_digest()
        if etag != expected:
            return {"error": "version_conflict"}
        return {"ok": True}
    """,
    "bound local read by a guard": """
    def check(store, body, sig):
        valid = sig == make_signature(body)
        if not valid:
            return False, "signature_mismatch"
        return True, ""
    """,
}


@pytest.mark.parametrize("form", sorted(INTEGRITY_FORMS))
def test_every_integrity_form_is_dropped_and_inverted(form: str) -> None:
    source = INTEGRITY_FORMS[form]
    texts = mutants(IntegrityBreak(), source, context_for(source))
    assert len(texts) == 2, texts  # drop, invert
    original = ast.dump(parse_function(textwrap.dedent(source)))
    assert all(ast.dump(parse_function(t)) != original for t in texts)


def test_a_comparison_with_a_constant_is_no_integrity_check() -> None:
    source = """
    def check(body):
        if hashlib.sha256(body).hexdigest() == "abc":
            return False, "known"
        return True, ""
    """
    assert mutants(IntegrityBreak(), source, context_for(source)) == []


def test_the_drop_mutant_makes_the_check_pass() -> None:
    source = """
    def check(store, etag):
        if store.locked or etag != store.etag:
            return {"error": "version_conflict"}
        return {"ok": True}
    """
    drop, invert = mutants(IntegrityBreak(), source, context_for(source))
    assert "if store.locked or False:" in drop  # `etag != ...` lets the call through when False
    assert "if store.locked or etag == store.etag:" in invert


VALIDITY_FORMS = {
    "clock field guard": ("if store.clock >= expires:\n        return False, 'expired'", 3),
    "now() returned": ("return datetime.now() < expires", 3),
    "time() in a local": (
        "live = time.time() <= expires\n    if not live:\n        return {'error': 'expired'}",
        3,
    ),
    "equality with now": ("if now == store.locked_until:\n        return False, 'locked'", 2),
}


@pytest.mark.parametrize("form", sorted(VALIDITY_FORMS))
def test_every_validity_form_is_dropped_inverted_and_shifted(form: str) -> None:
    body, count = VALIDITY_FORMS[form]
    source = f"def check(store, expires, now):\n    {body}\n    return True, ''\n"
    context = context_for(source, clock_fields=frozenset({"clock"}))
    texts = mutants(ValidityBreak(), source, context)
    assert len(texts) == count, texts
    assert len({ast.dump(parse_function(t)) for t in texts}) == count


# --- the return-refusal toy service ---------------------------------------------------------


@pytest.fixture(scope="module")
def voucher_pairs():
    return enumerate_pairs(TARGET, VOUCHER_TOOLS, ["M-PRECOND", "M-VALIDITY", "M-INTEGRITY"])


def test_the_voucher_service_offers_all_three_operators(voucher_pairs) -> None:
    by_operator = {p.mutant.operator for p in voucher_pairs}
    assert by_operator == {"M-PRECOND", "M-VALIDITY", "M-INTEGRITY"}
    sites = {(p.mutant.operator, p.mutant.site.qualname) for p in voucher_pairs}
    assert ("M-INTEGRITY", "signature_ok") in sites  # a returned boolean
    assert ("M-VALIDITY", "verify_token") in sites  # a bound local read by a guard
    assert ("M-PRECOND", "redeem_voucher") in sites  # `return {"error": ...}`


def test_voucher_mutants_are_detected(voucher_pairs) -> None:
    checker = ReferenceChecker()
    compiled = compile_target(TARGET)
    redeem = [p for p in voucher_pairs if p.tool == "redeem_voucher"]
    missed = set()
    for pair in redeem:
        with applied(TARGET.adapter, pair.mutant):
            report = checker.check_tool(TARGET, compiled, pair.tool)
        if report.verdict is not Verdict.VIOLATES:
            removed = [line for line in pair.mutant.diff.splitlines() if line.startswith("-    if")]
            missed.add((pair.mutant.operator, removed[0].strip("- ")))
    # Each of these guards, removed, still refuses: by the later signature check (an empty
    # body), or by a KeyError / AttributeError on the unknown voucher, which the contract
    # accepts as a refusal (it names no error type). Every other mutant is detected.
    assert missed == {
        ("M-PRECOND", "if not ok:"),
        ("M-PRECOND", "if not body or not signature:"),
        ("M-PRECOND", "if voucher is None or str(voucher.expires_at) != expires:"),
    }


def test_check_prints_the_primary_label_of_a_tool_breaking_observation_clauses(
    voucher_pairs, capsys
) -> None:
    from harness.cli import main

    drop = next(
        p
        for p in voucher_pairs
        if p.tool == "redeem_voucher"
        and p.mutant.operator == "M-VALIDITY"
        and "+    unexpired = True" in p.mutant.diff
    )
    with applied(TARGET.adapter, drop.mutant):
        code = main(["check", "toy_domain", "--tool", "redeem_voucher"])
    out = capsys.readouterr().out
    assert code == 1
    assert "primary label: expired_before_use" in out.replace("\n", " ").replace("│", " ")

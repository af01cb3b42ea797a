"""The independent liveness corpus: is a mutant's behaviour different at all?

The corpus is sampled at draw time, seeded, from a fresh snapshot and the contracts'
declared values, by a generator that shares nothing with the checker's probe search (so
"live" does not depend on the checker under test). A mutant is *live* when, on some corpus
call from a fresh environment, the outcome (success, error type, result), the post-state
or the state after reset differs from the original's under canonical equality.
Error messages are free text and are not compared.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

from harness.contracts.model import ArgumentSpec, Contract
from harness.contracts.predicate import Predicate, PredicateRuntimeError, compile_predicate
from harness.targets.adapter import Adapter
from harness.targets.equality import (
    JSON,
    Difference,
    canonical_equal,
    diff,
    mask_state,
    parse_pattern,
)

Observation = dict[str, Any]
OBSERVATION_FIELDS = ("success", "error_type", "result", "post", "after_reset")


def _values(state: JSON) -> dict[str, list[JSON]]:
    found: dict[str, list[JSON]] = {"str": [], "int": [], "float": [], "list": []}

    def walk(node: JSON) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                found["str"].append(key)
                walk(value)
        elif isinstance(node, list):
            found["list"].append(node)
            for value in node:
                walk(value)
        elif isinstance(node, str):
            found["str"].append(node)
        elif isinstance(node, int) and not isinstance(node, bool):
            found["int"].append(node)
        elif isinstance(node, float):
            found["float"].append(node)

    walk(state)
    return {k: sorted({repr(v): v for v in vs}.values(), key=repr) for k, vs in found.items()}


def build_corpus(
    adapter: Adapter, contract: Contract, seed: int, size: int
) -> list[dict[str, JSON]]:
    """`size` distinct argument assignments for one tool, seeded: up to half of them legal
    (every precondition true on a fresh state) so the tool's effects are exercised, the
    rest illegal so its guards are. Random sampling plus the contract's preconditions;
    nothing of the checker's probe search is used."""
    state = mask_state(adapter.snapshot(adapter.fresh()), _masks(adapter, contract))
    values = _values(state)
    preconditions = [compile_predicate(c.predicate) for c in contract.preconditions]
    rng = random.Random(f"liveness:{seed}:{contract.tool}")
    legal: list[dict[str, JSON]] = []
    illegal: list[dict[str, JSON]] = []
    seen: set[str] = set()
    for _ in range(size * 50):
        args = {name: _sample(rng, spec, values) for name, spec in contract.signature.items()}
        key = repr(sorted(args.items()))
        if key in seen:
            continue
        seen.add(key)
        (legal if _legal(preconditions, state, args) else illegal).append(args)
        if len(legal) >= size and len(illegal) >= size:
            break
    half = min(len(legal), (size + 1) // 2)
    return legal[:half] + illegal[: size - half]


def _sample(rng: random.Random, spec: ArgumentSpec, values: dict[str, list[JSON]]) -> JSON:
    pool = list(spec.probe_values)
    pool += values.get(spec.base_type, [])
    if spec.base_type == "bool":
        pool += [True, False]
    if spec.base_type == "int":
        pool += [0, 1, 5]
    if spec.optional:
        pool.append(spec.default)
    if spec.nullable:
        pool.append(None)
    return rng.choice(pool) if pool else None


def _legal(preconditions: list[Predicate], state: JSON, args: dict[str, JSON]) -> bool:
    try:
        return all(p.holds({"pre": state, "args": args}) for p in preconditions)
    except PredicateRuntimeError:
        return False


def _masks(adapter: Adapter, contract: Contract | None = None) -> list[tuple[str, ...]]:
    patterns = [*adapter.volatile_paths(), *(contract.volatile if contract else [])]
    return [parse_pattern(p) for p in dict.fromkeys(patterns)]


# A recorded liveness call: {RECORDED: {task, step, prefix}, ARGS: {...}}. Neither key can
# be an argument's name (not an identifier), so it never meets a sampled call's arguments.
RECORDED = "@recorded"
ARGS = "@args"


def recorded_call(call: Any) -> dict[str, Any]:
    """A liveness call of a recorded call (`harness.targets.recorded.RecordedCall`): made on
    its task's initial environment after its prefix."""
    prefix = [p.model_dump(mode="json") for p in call.prefix]
    return {RECORDED: {"task": call.task, "step": call.step, "prefix": prefix}, ARGS: call.args}


def call_arguments(call: dict[str, Any]) -> dict[str, JSON]:
    """The arguments the tool gets on a liveness call (sampled or recorded; a recorded
    call's a deep copy, so a tool that changes what it is passed never changes the corpus)."""
    return copy.deepcopy(call[ARGS]) if RECORDED in call else dict(call)


def _environment(adapter: Adapter, call: dict[str, Any]) -> Any:
    """A fresh environment, or a recorded call's pre-state (prefix with the tools as bound)."""
    if RECORDED not in call:
        return adapter.fresh()
    where = call[RECORDED]
    env = adapter.task_environment(where["task"])  # type: ignore[attr-defined]
    for step in where["prefix"]:
        adapter.invoke(env, step["tool"], copy.deepcopy(step["args"]))
    return env


def observe(adapter: Adapter, tool: str, corpus: list[dict[str, JSON]]) -> list[Observation]:
    """What each corpus call does from a fresh environment (a recorded call: from its
    pre-state), reset included."""
    masks = _masks(adapter)
    out = []
    for call in corpus:
        env = _environment(adapter, call)  # type: ignore[arg-type]
        outcome = adapter.invoke(env, tool, call_arguments(call))  # type: ignore[arg-type]
        post = mask_state(adapter.snapshot(env), masks)
        try:
            adapter.reset(env)
            after_reset: JSON = mask_state(adapter.snapshot(env), masks)
        except Exception as exc:  # a reset that fails is behaviour too
            after_reset = {"reset_error": type(exc).__name__}
        out.append(
            {
                "success": outcome.success,
                "error_type": outcome.error_type,
                "result": outcome.result,
                "post": post,
                "after_reset": after_reset,
            }
        )
    return out


@dataclass(frozen=True)
class CallDifference:
    """How one liveness call of the mutant differs from the original's: computed once per
    call, and every view of a pair's liveness (`differences`, `kill_vector`,
    `miss_cause.call_changes`) derived from it, so no observation is diffed twice."""

    outcome: bool  # success or error type changed
    result: bool  # the returned value changed under canonical equality
    post: tuple[Difference, ...]  # at most 20 state differences each
    after_reset: tuple[Difference, ...]

    def __bool__(self) -> bool:
        return self.outcome or self.result or bool(self.post) or bool(self.after_reset)

    def markers(self) -> list[str]:
        """This call's `differences` entries: `outcome`, `result` and dotted state paths."""
        found = ["outcome"] if self.outcome else []
        found += ["result"] if self.result else []
        found += [f"post.{d.dotted()}" for d in self.post]
        return found + [f"after_reset.{d.dotted()}" for d in self.after_reset]


def compare(original: list[Observation], mutant: list[Observation]) -> list[CallDifference]:
    """The mutant's observations against the original's, call by call."""
    return [
        CallDifference(
            outcome=before["success"] != after["success"]
            or before["error_type"] != after["error_type"],
            result=not canonical_equal(before["result"], after["result"]),
            post=tuple(diff(before["post"], after["post"], limit=20)),
            after_reset=tuple(diff(before["after_reset"], after["after_reset"], limit=20)),
        )
        for before, after in zip(original, mutant, strict=True)
    ]


def differences_of(calls: list[CallDifference]) -> list[str]:
    """Where the mutant's observations differ: state paths (post.*, after_reset.*) and
    `outcome` / `result` markers. Empty: not live on this corpus."""
    return sorted({marker for call in calls for marker in call.markers()})


def kill_vector_of(calls: list[CallDifference]) -> list[int]:
    """The indices of the corpus calls whose observations differ: the calls that kill the
    mutant, for dynamic subsumption (harness.analysis.dominators)."""
    return [index for index, call in enumerate(calls) if call]


def differences(original: list[Observation], mutant: list[Observation]) -> list[str]:
    """`differences_of` two lists of observations."""
    return differences_of(compare(original, mutant))


def kill_vector(original: list[Observation], mutant: list[Observation]) -> list[int]:
    """`kill_vector_of` two lists of observations."""
    return kill_vector_of(compare(original, mutant))

"""The fast paths of canonical equality and masking agree with their plain definitions."""

from __future__ import annotations

import random

from harness.targets.equality import (
    MISSING,
    STRICT,
    Difference,
    EqualityPolicy,
    _diff,
    _masked,
    canonical_equal,
    diff,
    mask_state,
    scalar_equal,
)

KEYS = ["a", "b", "0", "1"]
SCALARS = [0, 1, 1.0, 2, True, False, None, "a", "", float("nan")]


def value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth < 3 and roll < 0.3:
        return {rng.choice(KEYS): value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if depth < 3 and roll < 0.45:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return rng.choice(SCALARS)


def changed(rng: random.Random, v, depth: int = 0):
    if rng.random() < 0.15:
        return value(rng, depth)
    if isinstance(v, dict):
        return {k: changed(rng, x, depth + 1) for k, x in v.items()}
    if isinstance(v, list):
        return [changed(rng, x, depth + 1) for x in v]
    return v


def plain_mask_state(v, masks, path=()):
    """The definition: drop every dict key whose path a mask matches; copy the rest."""
    if isinstance(v, dict):
        return {
            k: plain_mask_state(x, masks, (*path, k))
            for k, x in v.items()
            if not _masked((*path, k), masks)
        }
    if isinstance(v, list):
        return [plain_mask_state(x, masks, (*path, i)) for i, x in enumerate(v)]
    return v


def plain_diff(a, b, path, masks, policy, out, limit):
    """The definition: walk every path of both values in sorted key order."""
    if len(out) >= limit or (path and _masked(path, masks)):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            left, right = a.get(key, MISSING), b.get(key, MISSING)
            plain_diff(left, right, (*path, key), masks, policy, out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            left = a[i] if i < len(a) else MISSING
            right = b[i] if i < len(b) else MISSING
            plain_diff(left, right, (*path, i), masks, policy, out, limit)
    elif a is MISSING or b is MISSING:
        if a is not b:
            out.append(Difference(path, a, b))
    elif isinstance(a, dict | list) or isinstance(b, dict | list) or not scalar_equal(a, b, policy):
        out.append(Difference(path, a, b))


def cases(seed: int, count: int = 5000):
    """(a, b, masks): random states, b mostly a small change of a, and 0-2 mask patterns."""
    rng = random.Random(seed)
    for _ in range(count):
        a = value(rng)
        b = changed(rng, a) if rng.random() < 0.7 else value(rng)
        masks = [
            tuple(rng.choice([*KEYS, "*"]) for _ in range(rng.randint(1, 3)))
            for _ in range(rng.randint(0, 2))
        ]
        yield a, b, masks


def test_diff_agrees_with_the_definition():
    for a, b, masks in cases(11):
        for policy in (STRICT, EqualityPolicy(numeric_tower=True)):
            for limit in (1, 3, 50):
                expected: list = []
                plain_diff(a, b, (), masks, policy, expected, limit)
                got = diff(a, b, masks=masks, policy=policy, limit=limit)
                assert repr(got) == repr(expected)


def test_fast_paths_agree_with_the_definitions():
    for a, b, masks in cases(7):
        for policy in (STRICT, EqualityPolicy(numeric_tower=True)):
            found: list = []
            _diff(a, b, (), masks, policy, found, 1)
            assert canonical_equal(a, b, masks=masks, policy=policy) is (not found)
        if masks:
            assert repr(mask_state(a, masks)) == repr(plain_mask_state(a, masks))


def test_strictness_survives_the_fast_path():
    assert not canonical_equal(True, 1)
    assert not canonical_equal([1], [1.0])
    assert canonical_equal([1], [1.0], policy=EqualityPolicy(numeric_tower=True))
    assert not canonical_equal({"a": float("nan")}, {"a": float("nan")})
    assert canonical_equal({"a": 1, "t": 2}, {"a": 1, "t": 3}, masks=[("t",)])
    assert mask_state({"l": [{"x": 1}, 2]}, [("l", "0")]) == {"l": [{}, 2]}


def test_a_table_of_shared_records_differs_only_where_a_record_changed():
    """A snapshot's table shares its untouched records with the other snapshot's: only the
    changed, added or removed ones are walked and reported, in sorted key order."""
    records = {f"r{i}": {"n": i, "tags": ["x", i]} for i in range(300)}
    a, b = {"t": dict(records)}, {"t": dict(records)}
    b["t"]["r7"] = {"n": -1, "tags": ["x", 7]}
    b["t"]["r70"] = {"n": 70, "tags": ["x", 70.0]}
    del b["t"]["r5"]
    b["t"]["r300"] = {"n": 300}
    for limit in (1, 2, 50):
        expected: list = []
        plain_diff(a, b, (), [], STRICT, expected, limit)
        got = diff(a, b, limit=limit)
        assert repr(got) == repr(expected)
    paths = [d.path for d in diff(a, b)]
    assert paths == [("t", "r300"), ("t", "r5"), ("t", "r7", "n"), ("t", "r70", "tags", 1)]
    assert diff(a, b, masks=[("t", "r7")])[2].path == ("t", "r70", "tags", 1)
    assert not canonical_equal(a, b) and canonical_equal(a, {"t": dict(records)})

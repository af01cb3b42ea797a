from harness.targets.equality import (
    EqualityPolicy,
    bind_pattern,
    canonical_equal,
    diff,
    mask_state,
    parse_pattern,
    pattern_matches_any,
)


def test_bool_is_never_int():
    assert not canonical_equal(True, 1)
    assert not canonical_equal(False, 0)
    assert not canonical_equal({"a": True}, {"a": 1}, policy=EqualityPolicy(numeric_tower=True))


def test_int_and_float_differ_unless_numeric_tower():
    assert not canonical_equal(2, 2.0)
    assert canonical_equal(2, 2.0, policy=EqualityPolicy(numeric_tower=True))
    assert canonical_equal([1, {"x": 2.5}], [1, {"x": 2.5}])


def test_diff_names_paths_and_missing_keys():
    before = {"bank": {"accounts": {"a": {"balance": 5}}, "log": [1]}}
    after = {"bank": {"accounts": {"a": {"balance": 4}, "b": {"balance": 0}}, "log": [1, 2]}}
    paths = [d.dotted() for d in diff(before, after)]
    assert paths == ["bank.accounts.a.balance", "bank.accounts.b", "bank.log.1"]


def test_masks_hide_subtrees_with_wildcards():
    before = {"bank": {"accounts": {"a": {"balance": 5, "t": 1.0}}, "clock": 1.0}}
    after = {"bank": {"accounts": {"a": {"balance": 5, "t": 2.0}}, "clock": 9.0}}
    masks = [parse_pattern("bank.clock"), parse_pattern("bank.accounts.*.t")]
    assert not canonical_equal(before, after)
    assert canonical_equal(before, after, masks=masks)
    assert mask_state(after, masks) == {"bank": {"accounts": {"a": {"balance": 5}}}}


def test_argument_segments_bind_or_become_wildcards():
    assert bind_pattern("bank.accounts.{args.acc}.balance", {"acc": "a-1"}) == (
        "bank",
        "accounts",
        "a-1",
        "balance",
    )
    assert bind_pattern("bank.accounts.{args.acc}", None) == ("bank", "accounts", "*")
    state = {"bank": {"accounts": {"a-1": {"balance": 1}}}}
    assert pattern_matches_any(bind_pattern("bank.accounts.{args.acc}.balance", None), state)
    assert not pattern_matches_any(parse_pattern("bank.vaults"), state)


def test_canonical_key_agrees_with_canonical_equal():
    from harness.targets.equality import canonical_key

    values = [
        1,
        1.0,
        True,
        0,
        False,
        "1",
        None,
        [1, 2],
        [1.0, 2],
        {"a": 1},
        {"a": True},
        {"b": 1, "a": 2},
        {"a": 2, "b": 1},
        "",
        [],
        {},
        [[1]],
        [[True]],
        2.5,
        'a"b',
    ]
    for a in values:
        for b in values:
            for policy in (EqualityPolicy(), EqualityPolicy(numeric_tower=True)):
                same_key = canonical_key(a, policy) == canonical_key(b, policy)
                assert same_key == canonical_equal(a, b, policy=policy), (a, b, policy)


def test_a_wildcard_under_an_empty_container_may_match():
    from harness.targets.equality import pattern_may_match

    state = {"inbox": {"trash": {}, "emails": {"1": {"id": "1"}}}}
    assert pattern_may_match(("inbox", "trash", "*", "id"), state)
    assert pattern_may_match(("inbox", "emails", "*", "id"), state)
    assert not pattern_may_match(("inbox", "spam", "*"), state)
    assert not pattern_may_match(("inbox", "emails", "*", "nope"), state)

"""Observation contracts: production-path mutations, the storage tools' obs.* clauses, and
the M-VALIDITY / M-INTEGRITY mutants the checker must report with the right clause."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from harness.checker import ReferenceChecker, compile_target
from harness.checker.production_paths import (
    PRODUCTION_PATHS,
    link_text,
    percent_recode,
    reorder_query,
    soft_wrap,
    truncate,
)
from harness.checker.verdicts import DefectClass, ToolReport, Verdict
from harness.contracts.model import Contract
from harness.mutation.apply import applied
from harness.mutation.enumerate import enumerate_pairs
from harness.mutation.model import Pair
from harness.targets.registry import load_target
from toy_domain.storage import Storage, advance_clock, download, presign_download

TARGET = load_target("toy_domain")
ADAPTER = TARGET.adapter
CHECKER = ReferenceChecker()
COMPILED = compile_target(TARGET)
STORAGE_TOOLS = [
    "presign_download",
    "download",
    "advance_clock",
    "get_object",
    "update_object",
    "export_bucket",
]


def presigned_url() -> str:
    return presign_download(Storage(), "reports/q3 plan.txt", 300)["url"]


def check(tool: str) -> ToolReport:
    return CHECKER.check_tool(TARGET, COMPILED, tool)


# --- production-path mutations --------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PRODUCTION_PATHS))
def test_every_production_path_changes_the_bytes_of_a_toy_presigned_url(name: str) -> None:
    url = presigned_url()
    altered = PRODUCTION_PATHS[name](url)
    assert altered != url
    assert PRODUCTION_PATHS[name](url) == altered  # pure: same input, same output


def test_production_paths_do_what_their_names_say() -> None:
    url = presigned_url()
    assert truncate(url, 20) == url[:20]
    wrapped = soft_wrap(url, 50)
    assert wrapped.replace("\n", "") == url and wrapped.count("\n") == (len(url) - 1) // 50
    assert "%2F" in url and "/" in percent_recode(url).partition("?")[2]  # decoded
    assert percent_recode('"d31abf1447e6ea1d"') == "%22d31abf1447e6ea1d%22"  # encoded
    reordered = reorder_query(url)
    assert reordered.partition("?")[2].split("&") == url.partition("?")[2].split("&")[::-1]
    assert reorder_query("no-query") == "no-query"
    shown = link_text(url, 40)
    assert shown == url[:40] + "…" and link_text("short", 40) == "short"


def test_every_production_path_is_refused_by_the_original_download() -> None:
    for name, mutate in PRODUCTION_PATHS.items():
        storage = Storage()
        url = presign_download(storage, "reports/q3 plan.txt", 300)["url"]
        with pytest.raises(ValueError):
            download(storage, mutate(url))
        assert storage.objects["reports/q3 plan.txt"].downloads == 0, name


def test_expiry_boundary_of_the_original_download() -> None:
    storage = Storage()
    url = presign_download(storage, "readme.txt", 300)["url"]
    advance_clock(storage, 299)
    assert download(storage, url)["body"] == "hello"
    advance_clock(storage, 1)
    with pytest.raises(ValueError, match="Expired before use"):
        download(storage, url)


# --- the contract language --------------------------------------------------------------------


def test_observation_clause_needs_its_parts() -> None:
    base = {
        "tool": "download",
        "target": "toy_domain",
        "source": {"file": "f.py", "function": "download", "start_line": 1, "end_line": 2},
        "signature": {"url": {"type": "str"}},
        "success": {"signal": "no_error", "inferred": True},
    }
    clause = {
        "id": "obs.x",
        "text": "t",
        "axis": "validity",
        "label": "expired_before_use",
        "issued_by": "presign_download",
        "artifact": "url",
        "artifact_from": "url",
        "predicate": "now < issued.expires_at",
        "inferred": True,
    }
    with pytest.raises(ValueError, match="clock"):
        Contract.model_validate({**base, "observations": [clause]})
    with pytest.raises(ValueError, match="artifact"):
        Contract.model_validate(
            {**base, "observations": [{**clause, "axis": "integrity", "artifact": None}]}
        )
    with pytest.raises(ValueError, match="names no argument"):
        Contract.model_validate(
            {**base, "observations": [{**clause, "axis": "integrity", "artifact": "link"}]}
        )
    with pytest.raises(ValueError, match="label"):
        Contract.model_validate({**base, "observations": [{**clause, "label": "gone"}]})


# --- the checker on the originals ------------------------------------------------------------


@pytest.mark.parametrize("tool", STORAGE_TOOLS)
def test_storage_tools_conform(tool: str) -> None:
    report = check(tool)
    assert report.verdict is Verdict.CONFORMS, [
        (c.clause_id, c.detail) for c in report.violations()
    ]


@pytest.mark.parametrize(
    ("tool", "clause", "graded"),
    [
        ("download", "obs.unexpired", 2),  # just before, and at, the expiry
        ("download", "obs.url_intact", 6),  # intact + the five production paths
        ("update_object", "obs.etag_current", 2),  # intact + the percent-encoded ETag
        ("export_bucket", "obs.retry_after", 2),
    ],
)
def test_observation_clauses_are_graded_on_the_originals(
    tool: str, clause: str, graded: int
) -> None:
    verdict = next(c for c in check(tool).clauses if c.clause_id == clause)
    assert verdict.verdict is Verdict.CONFORMS
    assert verdict.probes_graded == graded


# --- mutants: the right clause, class and label ------------------------------------------------


@pytest.fixture(scope="module")
def observation_pairs() -> list[Pair]:
    return enumerate_pairs(TARGET, STORAGE_TOOLS, ["M-VALIDITY", "M-INTEGRITY"])


def mutant_report(pair: Pair) -> ToolReport:
    with applied(ADAPTER, pair.mutant):
        return check(pair.tool)


def one_pair(pairs: list[Pair], operator: str, tool: str, changed: tuple[str, ...]) -> Pair:
    """The one pair of `operator` on `tool` whose diff holds every line of `changed`."""
    found = [
        p
        for p in pairs
        if p.mutant.operator == operator
        and p.tool == tool
        and all(line in p.mutant.diff for line in changed)
    ]
    assert len(found) == 1, [p.mutant.diff for p in found]
    return found[0]


@pytest.mark.parametrize(
    ("operator", "tool", "changed", "clause", "defect", "label"),
    [
        # expiry check removed
        (
            "M-VALIDITY",
            "download",
            ("-    if not storage.now < expires_at:", "+    pass"),
            "obs.unexpired",
            DefectClass.VALIDITY_BREAK,
            "expired_before_use",
        ),
        # `<` changed to `<=`: accepted at the expiry tick
        (
            "M-VALIDITY",
            "download",
            ("+    if not storage.now <= expires_at:",),
            "obs.unexpired",
            DefectClass.VALIDITY_BREAK,
            "expired_before_use",
        ),
        # signature check removed
        (
            "M-INTEGRITY",
            "download",
            ("-    if not hmac.compare_digest(signatures[0]", "+    pass"),
            "obs.url_intact",
            DefectClass.INTEGRITY_BREAK,
            "signature_mismatch",
        ),
        # ETag check removed
        (
            "M-INTEGRITY",
            "update_object",
            ("-    if not hmac.compare_digest(if_match", "+    pass"),
            "obs.etag_current",
            DefectClass.INTEGRITY_BREAK,
            "version_conflict",
        ),
        # Retry-After window one tick long: a legal export refused
        (
            "M-VALIDITY",
            "export_bucket",
            ("+    if storage.now <= storage.retry_after:",),
            "obs.retry_after",
            DefectClass.VALIDITY_BREAK,
            "rate_limited",
        ),
    ],
)
def test_observation_mutant_violates_its_clause(
    observation_pairs: list[Pair],
    operator: str,
    tool: str,
    changed: tuple[str, ...],
    clause: str,
    defect: DefectClass,
    label: str,
) -> None:
    pair = one_pair(observation_pairs, operator, tool, changed)
    report = mutant_report(pair)
    assert report.verdict is Verdict.VIOLATES
    verdict = next(c for c in report.clauses if c.clause_id == clause)
    assert verdict.verdict is Verdict.VIOLATES, verdict
    assert verdict.defect_class is defect
    assert verdict.label == label
    assert verdict.detail is not None and verdict.detail.startswith(label)
    assert verdict.witness is not None and verdict.witness.probes[0].tool in (
        "presign_download",
        "get_object",
        "export_bucket",
    )


def test_operators_act_only_on_observation_guards(observation_pairs: list[Pair]) -> None:
    sites = {(p.mutant.operator, p.mutant.site.qualname) for p in observation_pairs}
    assert sites == {
        ("M-VALIDITY", "download"),
        ("M-VALIDITY", "export_bucket"),
        ("M-INTEGRITY", "download"),
        ("M-INTEGRITY", "update_object"),
    }
    validity = [p for p in observation_pairs if p.mutant.operator == "M-VALIDITY"]
    assert len(validity) == 6  # per clock check: dropped, inverted, boundary shifted
    integrity = [p for p in observation_pairs if p.mutant.operator == "M-INTEGRITY"]
    assert len(integrity) == 4  # per digest check: dropped, inverted


# --- end to end: a small plan as users run it -------------------------------------------------

OBSERVATION_PLAN = """
schema_version: 1
name: obs
description: observation operators on the storage tools
seed: 7
timeout_seconds: 60
liveness_probes_per_tool: 4
arms:
  - name: closed_world
    kind: closed_world
    target: toy_domain
    tools: [download, update_object, export_bucket]
    operators: [M-VALIDITY, M-INTEGRITY]
    draw_per_operator: 12
    stratify_by: tool
"""


def harness_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True
    )


def test_closed_world_report_has_a_row_per_observation_axis(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "obs.yaml").write_text(OBSERVATION_PLAN)
    for command in ("draw", "freeze", "run"):
        done = harness_cli(command, "plans/obs.yaml", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "Closed-world recall per observation axis" in done.stdout
    (run,) = (tmp_path / "results" / "obs").iterdir()
    report = harness_cli("report", str(run), "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    with (tmp_path / "report" / "tables" / "closed_world_axes.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    by_axis = {(r["scope"], r["axis"]): r for r in rows}
    assert set(by_axis) == {
        (scope, axis) for scope in ("toy", "pooled") for axis in ("validity", "integrity")
    }
    # every candidate in the pool is drawn: 2 clock checks x (dropped, inverted, shifted),
    # 2 digest checks x (dropped, inverted)
    toy_validity, toy_integrity = by_axis["toy", "validity"], by_axis["toy", "integrity"]
    assert (toy_validity["n"], toy_validity["detected"]) == ("6", "6")
    assert (toy_integrity["n"], toy_integrity["detected"]) == ("4", "4")
    assert toy_integrity["class_matched_recall"] == "1.000"
    # the inverted Retry-After check refuses the first, legal export: detected, but as a
    # refused legal call (before the clock window is ever probed), not as a validity break
    assert toy_validity["class_matched_recall"] == "0.833"


def test_an_issuer_that_issues_differently_each_time_makes_the_clauses_untestable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import toy_domain.storage as storage_module

    original = storage_module.presign_download
    calls = iter(range(1000))

    def presign_with_a_counter(storage: Storage, key: str, ttl: int) -> dict:
        return {**original(storage, key, ttl), "issued_call": next(calls)}

    monkeypatch.setattr(storage_module, "presign_download", presign_with_a_counter)
    report = check("download")
    for clause_id in ("obs.unexpired", "obs.url_intact"):
        verdict = next(c for c in report.clauses if c.clause_id == clause_id)
        assert verdict.verdict is Verdict.UNTESTABLE
        assert verdict.detail is not None and "issued another result" in verdict.detail

"""mutation-report.json: valid against the vendored mutation-testing-elements schema, and
each mutant at the exact span its diff changes, with the text that replaces it."""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path

import fastjsonschema
import jsonschema
import pytest

from harness.analysis import report
from harness.analysis.mutation_report import (
    apply_diff,
    change_span,
    report_schema,
    validate_report,
)
from harness.analysis.report import mutation_payload
from harness.analysis.runs import incomplete, ledger_read, load_run_meta

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "results" / "reference"
PUBLISHED = sorted(p.parent for p in REFERENCE.glob("*/*/run.json"))


def _regenerated(runs: list[Path]) -> list[Path]:
    """The newest of each set of published runs with byte-identical corpus.json and the same
    checker (refreezes of the same pairs): what the mutation report reads of them differs in
    the freeze id and the pairs' timing, so regenerating one a set exercises every kind of
    published run without paying again for each refreeze."""
    newest: dict[tuple[str, str], Path] = {}
    records = {run: json.loads((run / "run.json").read_text()) for run in runs}
    for run in sorted(runs, key=lambda r: records[r]["started_at"]):
        corpus = hashlib.sha256((run / "corpus.json").read_bytes()).hexdigest()
        newest[(corpus, records[run]["checker"])] = run
    return sorted(newest.values())


SCHEMA = ROOT / "harness" / "analysis" / "schemas" / "mutation-testing-report-schema.json"

SOURCE = "def f(a, b):\n    x = a + b\n    y = x * 2\n    return y\n\n\ndef g():\n    return 1\n"


def _diff(before: str, after: str, context: int = 3) -> str:
    """A standard unified diff (difflib), independent of the harness's own diff writer."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), "a", "b", n=context
        )
    )


@pytest.mark.parametrize(
    ("after", "start", "end", "replacement"),
    [
        (SOURCE.replace("a + b", "a - b"), (2, 11), (2, 12), "-"),
        (SOURCE.replace("    y = x * 2\n", "    pass\n"), (3, 5), (3, 14), "pass"),
        (SOURCE.replace("x * 2", "x * 2 + 1"), (3, 14), (3, 14), " + 1"),  # insertion
        (SOURCE.replace("return 1", "return 0").replace("a + b", "a"), (2, 10), (8, 13), None),
    ],
)
def test_change_span_is_the_exact_change(after, start, end, replacement) -> None:
    for context in (0, 1, 3):
        diff = _diff(SOURCE, after, context)
        assert apply_diff(SOURCE, diff) == after
        span = change_span(SOURCE, diff)
        assert span is not None
        location, text = span
        assert (location.start.line, location.start.column) == start
        assert (location.end.line, location.end.column) == end
        if replacement is not None:
            assert text == replacement
        # Splicing the replacement into the span gives the mutated file back.
        lines = SOURCE.splitlines(keepends=True)
        begin = sum(map(len, lines[: start[0] - 1])) + start[1] - 1
        stop = sum(map(len, lines[: end[0] - 1])) + end[1] - 1
        assert SOURCE[:begin] + text + SOURCE[stop:] == after


def _brute_span(source: str, after: str) -> tuple[tuple[int, int], tuple[int, int], str]:
    """The span by comparing character by character: the longest common prefix, then the
    longest common suffix of what is left."""

    def common(a: str, b: str) -> int:
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    prefix = common(source, after)
    suffix = min(common(source[::-1], after[::-1]), min(len(source), len(after)) - prefix)

    def position(offset: int) -> tuple[int, int]:
        return source.count("\n", 0, offset) + 1, offset - (source.rfind("\n", 0, offset) + 1) + 1

    return position(prefix), position(len(source) - suffix), after[prefix : len(after) - suffix]


def _span(source: str, diff: str) -> tuple[tuple[int, int], tuple[int, int], str]:
    """`change_span` of a diff that applies, as (start, end, replacement)."""
    span = change_span(source, diff)
    assert span is not None
    location, text = span
    start, end = location.start, location.end
    return (start.line, start.column), (end.line, end.column), text


LONG = "x = 1\n" * 150 + "def f():\n    return 'a' + 'b'\n" + "y = 2\n" * 150


@pytest.mark.parametrize(
    "after",
    [
        LONG.replace("'a' + 'b'", "'ab' + 'b'"),  # the prefix runs on past the change
        LONG.replace("'a' + 'b'", "'a' + 'b' + 'b'"),  # and the suffix too
        LONG.replace("return 'a' + 'b'", "pass"),
        LONG.replace("x = 1\n", "x = 2\n", 1),  # the first line
        LONG[: -len("y = 2\n")] + "y = 3\n",  # the last line
        LONG.replace("'a'", "'" + "a" * 300 + "'"),  # a change longer than a gallop's step
        LONG.replace("x = 1\n", "", 3),  # lines removed at the start
    ],
)
def test_a_span_far_from_the_start_is_the_longest_common_prefix_and_suffix(after) -> None:
    """The span search starts from the lines a hunk leaves alone and gallops: on a long
    file, its span is the one a character-by-character comparison gives."""
    for context in (0, 1, 3):
        assert _span(LONG, _diff(LONG, after, context)) == _brute_span(LONG, after)


def _marked_diff(before: str, after: str, context: int) -> str:
    """A unified diff whose lines without a newline (a file's last) carry the marker
    `diff` writes after them."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), "a", "b", n=context
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (LONG.rstrip("\n"), LONG.rstrip("\n")[: -len("y = 2")] + "y = 3"),  # no last newline
        (LONG.rstrip("\n"), LONG.rstrip("\n") + "\nz = 4"),
        (LONG.replace("\n", "\r\n"), LONG.replace("\n", "\r\n").replace("'a'", "'ab'")),
    ],
    ids=["last-line-changed", "line-added-after-the-last", "crlf"],
)
def test_a_span_at_a_file_end_without_a_newline_or_with_crlf_is_exact(before, after) -> None:
    for context in (0, 1, 3):
        diff = _marked_diff(before, after, context)
        assert apply_diff(before, diff) == after
        assert _span(before, diff) == _brute_span(before, after)


def test_a_hunk_past_the_end_of_a_shorter_file_is_placed_at_its_end() -> None:
    """A mutant drawn from a longer file whose hunk only adds lines after the installed
    file's end: it applies, and its span is the end (the report once raised IndexError)."""
    for diff in ("@@ -3,0 +3 @@\n+b\n", "@@ -4 +1 @@\n+b\n"):
        assert apply_diff("a\n", diff) == "a\nb\n"
        assert _span("a\n", diff) == _brute_span("a\n", "a\nb\n") == ((2, 1), (2, 1), "b\n")


def test_a_diff_that_does_not_fit_the_source_gives_no_span() -> None:
    diff = _diff(SOURCE, SOURCE.replace("a + b", "a - b"))
    assert change_span(SOURCE.replace("x = a + b", "x = b + a"), diff) is None
    assert change_span("", diff) is None
    assert change_span(SOURCE, "") is None


def test_the_vendored_schema_is_the_npm_one() -> None:
    schema = json.loads(SCHEMA.read_text())
    assert schema["$id"] == "http://stryker-mutator.io/report.schema.json"
    assert report_schema() == schema
    assert (SCHEMA.parent / "NOTICE").read_text().count("Apache License 2.0") == 1


def _exact_mutants(payload: dict) -> None:
    validate_report(payload)
    assert any(file["mutants"] for file in payload["files"].values())
    # Older published runs' pairs are not in the current drawn corpus: site unknown, at 1:1;
    # a pair whose site the installed source no longer matches is shown whole, and says so.
    unlocated = ("(site unknown)", "(source changed since the draw")
    for file in payload["files"].values():
        lines = file["source"].count("\n") + 1  # once a file: a source is read per mutant else
        for mutant in file["mutants"]:
            assert ("replacement" in mutant) != any(u in mutant["description"] for u in unlocated)
            start, end = mutant["location"]["start"], mutant["location"]["end"]
            assert (start["line"], start["column"]) <= (end["line"], end["column"])
            assert end["line"] <= lines


@pytest.mark.parametrize("run", PUBLISHED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_published_run_has_a_valid_report_of_exact_mutants(run: Path) -> None:
    _exact_mutants(json.loads((run / "mutation-report.json").read_text()))


@pytest.mark.parametrize("run", _regenerated(PUBLISHED), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_kind_of_published_run_reports_valid_exact_mutants_again(run: Path) -> None:
    _exact_mutants(_mutation_payload(run))  # validated as `report` validates what it writes


def _mutation_payload(run: Path) -> dict:
    """What `report` writes to mutation-report.json, without the tables, plot and page (the
    whole report of an exhaustive open-world run takes 20 s; test_the_newest_runs_locate_
    every_mutant holds the two to the same bytes)."""
    meta, read = load_run_meta(run), ledger_read(run)
    meta = meta.model_copy(update={"incomplete": incomplete(run, read)})
    return mutation_payload(run, meta, read.rows)[0]


def test_one_report_is_regenerated_for_each_set_of_refrozen_runs() -> None:
    """The published exhaustive open-world runs are refreezes of few sets of pairs, each
    scored by one checker version (1.3.0 and 1.4.0 scored the same pairs): the newest run
    of each set is regenerated, and no other."""
    chosen = _regenerated(PUBLISHED)
    refrozen = [r for r in PUBLISHED if r.parent.name == "open_world_all"]
    sets: dict[tuple[bytes, str], list[Path]] = {}
    for run in refrozen:
        checker = json.loads((run / "run.json").read_text())["checker"]
        sets.setdefault(((run / "corpus.json").read_bytes(), checker), []).append(run)
    assert len(refrozen) > len(sets)  # some were refrozen
    started = {r: json.loads((r / "run.json").read_text())["started_at"] for r in refrozen}
    newest = {max(runs, key=started.__getitem__) for runs in sets.values()}
    assert {r for r in chosen if r.parent.name == "open_world_all"} == newest


def _broken(payload: dict) -> list[dict]:
    """Copies of a valid report, each broken in one way the schema forbids."""
    import copy

    variants = []
    for path, value in (
        (("schemaVersion",), None),
        (("files", 0, "mutants", 0, "status"), "Nope"),
        (("files", 0, "mutants", 0, "location", "start", "line"), "one"),
        (("files", 0, "mutants", 0, "id"), 7),
        (("thresholds", "high"), 101),
    ):
        broken = copy.deepcopy(payload)
        node = broken
        for step in path[:-1]:
            node = (
                node[step]
                if isinstance(node, list) or not isinstance(step, int)
                else list(node.values())[step]
            )
        if value is None:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        variants.append(broken)
    return variants


def test_the_compiled_validator_agrees_with_jsonschema() -> None:
    # jsonschema, the reference implementation, is the oracle for the compiled validator
    schema = json.loads(SCHEMA.read_text())
    smallest = min(PUBLISHED, key=lambda p: (p / "mutation-report.json").stat().st_size)
    payload = json.loads((smallest / "mutation-report.json").read_text())
    jsonschema.validate(payload, schema)
    validate_report(payload)
    for broken in _broken(payload):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)
        with pytest.raises(fastjsonschema.JsonSchemaValueException):
            validate_report(broken)


def test_the_newest_runs_locate_every_mutant(tmp_path) -> None:
    # the published runs of the current freezes: their mutants fit the installed source
    plans = REFERENCE.parents[1] / "plans"
    for plan in ("closed_world", "open_world"):
        freeze_id = json.loads((plans / f"{plan}.freeze.json").read_text())["freeze_id"]
        run = REFERENCE / plan / freeze_id
        assert (run / "ledger.jsonl").is_file(), f"{plan}: freeze {freeze_id} is not published"
        payload = json.loads(report(run, tmp_path / run.name).mutation_report.read_text())
        mutants = [m for f in payload["files"].values() for m in f["mutants"]]
        assert len(mutants) > 100 and all("replacement" in m for m in mutants)
        assert payload == _mutation_payload(run)  # the other tests' shortcut is report's


def test_the_update_scheduled_transaction_survivor_shows_its_real_change() -> None:
    payload = _mutation_payload(REFERENCE / "closed_world" / "1150b599761a06f8")
    file = payload["files"]["agentdojo/default_suites/v1/tools/banking_client.py"]
    (survivor,) = [
        m
        for m in file["mutants"]
        if "update_scheduled_transaction" in m["description"] and m["status"] == "Survived"
    ]
    assert survivor["location"]["start"]["line"] == 137
    assert survivor["location"]["end"]["line"] == 145
    lines = file["source"].splitlines()[136:145]
    assignments = [line for line in lines if " = " in line]
    assert len(assignments) == 5
    assert survivor["replacement"].count("pass") == 5
    assert " = " not in survivor["replacement"]

"""Contract coverage and authoring agreement (issue 28), on the toy domain."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.quality.agreement import compare_tool, pair_clauses
from harness.analysis.quality.corpus import (
    generate_probes,
    merge,
    read_corpus,
    run_probe,
    write_corpus,
)
from harness.analysis.quality.coverage import tool_coverage
from harness.analysis.quality.surface import docstring_sentences
from harness.cli import main
from harness.contracts.model import Contract
from harness.targets.registry import Target, load_target


@pytest.fixture(scope="module")
def toy() -> Target:
    return load_target("toy_domain")


def with_contract(target: Target, contract: Contract) -> Target:
    return Target(target.adapter, {**target.contracts, contract.tool: contract})


def drop(contract: Contract, field: str, clause_id: str) -> Contract:
    kept = [c for c in getattr(contract, field) if c.id != clause_id]
    assert len(kept) == len(getattr(contract, field)) - 1
    return contract.model_copy(update={field: kept})


def test_docstring_sentences_split_fields_sections_and_prose() -> None:
    doc = (
        "Deposit money. It is applied at once.\n\n"
        ':param account_id: ID of the account, e.g. "acc-1".\n'
        ":param amount: Amount.\n\n"
        "Args:\n    x (int): The x. Second sentence.\n\nReturns:\n    A message."
    )
    assert docstring_sentences(doc) == [
        "Deposit money.",
        "It is applied at once.",
        ':param account_id: ID of the account, e.g. "acc-1".',
        ":param amount: Amount.",
        "x (int): The x.",
        "Second sentence.",
        "A message.",
    ]


def test_a_skipped_sentence_lowers_surface_coverage_by_exactly_that(toy: Target) -> None:
    full = tool_coverage(toy, "deposit")
    skipped = drop(toy.contracts["deposit"], "preconditions", "pre.account_exists")
    less = tool_coverage(with_contract(toy, skipped), "deposit")
    assert less.sentences == full.sentences
    assert less.sentences_quoted == full.sentences_quoted - 1
    new = [s.text for s in less.uncovered if s not in full.uncovered]
    assert new == ["Raises ValueError if the account does not exist."]


def test_a_skipped_written_field_lowers_state_coverage_by_exactly_that(toy: Target) -> None:
    full = tool_coverage(toy, "deposit")
    assert full.written_paths == ["bank.accounts.*.balance"]
    # the returned message quotes the new balance, so eff.result reads the field too
    assert full.constrained_paths == {
        "bank.accounts.*.balance": ["eff.balance_increased", "eff.result"]
    }
    one = drop(toy.contracts["deposit"], "effects", "eff.balance_increased")
    assert tool_coverage(with_contract(toy, one), "deposit").constrained_paths == {
        "bank.accounts.*.balance": ["eff.result"]
    }
    skipped = drop(one, "effects", "eff.result")
    less = tool_coverage(with_contract(toy, skipped), "deposit")
    assert less.written_paths == full.written_paths
    assert less.constrained_paths == {}
    assert less.unconstrained_paths == ["bank.accounts.*.balance"]


def test_a_two_path_tool_loses_only_the_path_its_effect_constrained(toy: Target) -> None:
    full = tool_coverage(toy, "freeze_account")
    assert len(full.written_paths) == 2 and not full.unconstrained_paths
    path, (clause,) = next((p, c) for p, c in full.constrained_paths.items() if len(c) == 1)
    less = tool_coverage(
        with_contract(toy, drop(toy.contracts["freeze_account"], "effects", clause)),
        "freeze_account",
    )
    assert less.unconstrained_paths == [path]
    assert len(less.constrained_paths) == len(full.constrained_paths) - 1


def outcomes(target: Target, contract: Contract) -> list:
    probes = generate_probes(target.adapter, contract, 0, "test")
    return [(i, run_probe(target.adapter, p)) for i, p in enumerate(probes)]


def test_identical_sets_agree_n_of_n(toy: Target) -> None:
    contract = toy.contracts["transfer"]
    runs = outcomes(toy, contract)
    record, found, _ = compare_tool(contract, contract, runs, toy.adapter.volatile_paths(), "blind")
    assert record.figure.n > 20
    assert record.figure.agree == record.figure.n
    assert record.tool_verdicts.agree == record.tool_verdicts.n > 0
    assert found == []
    assert not record.pairing.only_a and not record.pairing.only_b


def test_untestable_against_conforms_is_a_disagreement(toy: Target) -> None:
    a = toy.contracts["deposit"]
    broken = [
        e.model_copy(update={"predicate": "post.bank.no_such_field == 1"})
        if e.id == "eff.balance_increased"
        else e
        for e in a.effects
    ]
    b = a.model_copy(update={"effects": broken})
    runs = outcomes(toy, a)
    same, _, _ = compare_tool(a, a, runs, toy.adapter.volatile_paths(), "blind")
    record, found, whole = compare_tool(a, b, runs, toy.adapter.volatile_paths(), "blind")
    assert found, "the broken effect must disagree somewhere"
    assert {(d.a, d.verdict_a.verdict, d.verdict_b.verdict) for d in found} == {
        ("eff.balance_increased", "CONFORMS", "UNTESTABLE")
    }
    assert record.figure.n == same.figure.n
    assert record.figure.agree == same.figure.agree - len(found)
    # the whole contract's verdict still conforms under B (its other effects conform)
    assert whole == [] and record.tool_verdicts == same.tool_verdicts


def test_clauses_pair_by_id_then_by_quote_and_unpaired_are_listed(toy: Target) -> None:
    a = toy.contracts["deposit"]
    renamed = [
        c.model_copy(update={"id": c.id + "_renamed"}) if c.id.startswith("frame.") else c
        for c in a.frame
    ]
    b = a.model_copy(update={"frame": renamed})
    pairing = pair_clauses(a, b)
    by_quote = {(p.a, p.b) for p in pairing.pairs if p.by == "quote"}
    assert by_quote == {("frame.bank", "frame.bank_renamed")}  # it cites a quote
    assert pairing.only_a == ["frame.other_services"]  # inferred: nothing to pair it by
    assert pairing.only_b == ["frame.other_services_renamed"]


def test_corpus_file_round_trips_with_its_hash(toy: Target, tmp_path: Path) -> None:
    probes = generate_probes(toy.adapter, toy.contracts["deposit"], 0, "a")
    corpus = merge([probes, probes], built_by="test", seed=0)
    assert len(corpus.probes) == len(probes)  # each distinct call once
    digest = write_corpus(corpus, tmp_path / "corpus.json")
    again, read_digest = read_corpus(tmp_path / "corpus.json")
    assert again == corpus and read_digest == digest


def test_agree_without_a_declared_stratum_is_a_user_error(
    toy: Target, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probes = generate_probes(toy.adapter, toy.contracts["deposit"], 0, "a")
    write_corpus(merge([probes], "test", 0), tmp_path / "c.json")
    (tmp_path / "strata.yaml").write_text("toy_domain/transfer: blind\n")
    code = main(
        [
            "contracts",
            "agree",
            "shipped",
            "shipped",
            "--corpus",
            str(tmp_path / "c.json"),
            "--strata",
            str(tmp_path / "strata.yaml"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    assert "toy_domain/deposit: no stratum declared" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "says"),
    [  # the second line would have replaced the first without a word
        ("toy_domain/deposit: blind\ntoy_domain/deposit: contaminated\n", "written twice"),
        ("- toy_domain/deposit\n", "<top>: is not a mapping"),
    ],
)
def test_a_strata_file_with_a_key_twice_or_no_mapping_is_one_line(
    toy: Target, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    probes = generate_probes(toy.adapter, toy.contracts["deposit"], 0, "a")
    write_corpus(merge([probes], "test", 0), tmp_path / "c.json")
    (tmp_path / "strata.yaml").write_text(text)
    corpus, strata = str(tmp_path / "c.json"), str(tmp_path / "strata.yaml")
    args = ["--corpus", corpus, "--strata", strata, "--out", str(tmp_path / "out")]
    assert main(["contracts", "agree", "shipped", "shipped", *args]) == 2
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert line.startswith(f"error: {strata}: ") and says in line and "; fix: " in line, err
    assert not (tmp_path / "out").exists()


def test_coverage_min_fails_below_the_share(tmp_path: Path) -> None:
    args = ["contracts", "coverage", "toy_domain", "--runs", "--out", str(tmp_path)]
    assert main([*args, "--min", "0.5"]) == 0
    assert main([*args, "--min", "0.9"]) == 1  # toy surface coverage is 0.64
    assert (tmp_path / "toy_domain.csv").read_text().startswith("target,tool,sentences")


def test_report_html_section_shows_the_forecast_beside_the_run_misses(toy: Target) -> None:
    import pandas as pd

    from harness.analysis.coverage_section import coverage_section
    from harness.analysis.quality.coverage import CoverageReport, TargetCoverage

    skipped = drop(toy.contracts["deposit"], "effects", "eff.balance_increased")
    skipped = drop(skipped, "effects", "eff.result")
    record = tool_coverage(with_contract(toy, skipped), "deposit")
    report = CoverageReport(
        seed=0, runs=[], targets=[TargetCoverage(target="toy_domain", tools=[record])]
    )
    frame = pd.DataFrame(
        {
            "target": ["toy_domain"] * 3 + ["other"],
            "tool": ["deposit", "deposit", "transfer", "deposit"],
            "miss_cause": ["no_clause", "no_clause", "no_clause", "no_clause"],
        }
    )
    page = coverage_section(frame, [report])
    assert (
        "<td>deposit</td><td>6/11</td><td>0/1</td><td>bank.accounts.*.balance</td><td>2</td>"
        in page
    )


def test_a_function_description_is_split_from_its_tool_marker_with_parameters() -> None:
    from harness.analysis.quality.surface import function_doc_sentences

    doc = {
        "name": "cat",
        "description": "This tool belongs to a file system. Tool description: Show a file. "
        "No paths.",
        "parameters": {"properties": {"file_name": {"description": "The file's name. "}}},
        "response": {"properties": {"file_content": {"description": "The content."}}},
    }
    assert function_doc_sentences(doc) == [
        "Show a file.",
        "No paths.",
        "The file's name.",
        "The content.",
    ]


class _ToyWithTasks:
    """The toy adapter with one task whose initial environment is the fresh one (the toy has
    no TaskAdapter on this branch): enough to run a recorded call from its task."""

    def __init__(self, adapter):  # type: ignore[no-untyped-def]
        self._adapter = adapter

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._adapter, name)

    def task_environment(self, task: str):  # type: ignore[no-untyped-def]
        assert task == "t1"
        return self._adapter.fresh()


def test_a_recorded_call_corpus_is_read_as_probes_from_its_task(
    toy: Target, tmp_path: Path
) -> None:
    import json

    recorded = {
        "schema_version": 1,
        "target": "toy_domain",
        "target_version": "x",
        "tasks": ["t1"],
        "counts": {"deposit": 1},
        "calls": [
            {
                "task": "t1",
                "step": 1,
                "tool": "deposit",
                "args": {"account_id": "acc-1", "amount": 7},
                "prefix": [{"tool": "deposit", "args": {"account_id": "acc-1", "amount": 3}}],
                "pre_state_sha256": "0" * 64,
                "succeeded": True,
                "changed_state": True,
            }
        ],
    }
    path = tmp_path / "toy_domain.json"
    path.write_text(json.dumps(recorded))
    corpus, _ = read_corpus(path)
    (probe,) = corpus.probes
    assert (probe.kind, probe.task, probe.tool) == ("recorded", "t1", "deposit")
    adapter = _ToyWithTasks(toy.adapter)
    run = run_probe(adapter, probe)  # type: ignore[arg-type]
    before = run.pre["bank"]["accounts"]["acc-1"]["balance"]
    assert run.post["bank"]["accounts"]["acc-1"]["balance"] == before + 7
    fresh = toy.adapter.snapshot(toy.adapter.fresh())["bank"]["accounts"]["acc-1"]["balance"]
    assert before == fresh + 3  # the prefix ran first
    more = tool_coverage(Target(adapter, toy.contracts), "deposit", extra_probes=[probe])  # type: ignore[arg-type]
    assert more.probes == tool_coverage(toy, "deposit").probes + 1


def test_agree_cli_on_a_copied_set_agrees_n_of_n_and_records_the_corpus_hash(
    toy: Target, tmp_path: Path
) -> None:
    import json
    import shutil

    folder = tmp_path / "copy" / "toy_domain"
    folder.mkdir(parents=True)
    shutil.copy(toy.contract_paths["deposit"], folder / "deposit.yaml")
    corpus = tmp_path / "corpus.json"
    common = ["--targets", "toy_domain"]
    assert (
        main(
            [
                "contracts",
                "corpus",
                "shipped",
                str(tmp_path / "copy"),
                *common,
                "--out",
                str(corpus),
            ]
        )
        == 0
    )
    (tmp_path / "strata.yaml").write_text("toy_domain/deposit: contaminated\n")
    out = tmp_path / "out"
    assert (
        main(
            [
                "contracts",
                "agree",
                "shipped",
                str(tmp_path / "copy"),
                "--corpus",
                str(corpus),
                "--strata",
                str(tmp_path / "strata.yaml"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    report = json.loads((out / "agreement.json").read_text())
    (tool,) = report["tools"]
    assert tool["figure"]["agree"] == tool["figure"]["n"] > 0
    assert list(report["strata"]) == ["contaminated"]
    assert report["disagreements"] == []
    assert "toy_domain/transfer" in report["only_in_a"]  # listed, not dropped
    _, digest = read_corpus(corpus)
    assert report["corpus_sha256"] == digest


def test_contract_quality_code_is_no_input_of_a_freeze() -> None:
    """It measures contracts for a person and never runs while a pair is scored: a module of
    it in the freeze's `harness` group made every committed freeze fail to verify."""
    from harness.execution.scope import harness_files

    keys = harness_files([])
    assert keys, "the harness group is not empty"
    assert not [k for k in keys if "/quality/" in k]
    assert "harness/targets/equality.py" in keys  # the group is the real one


def test_a_tool_with_no_fresh_legal_call_is_probed_after_another_tools_call(toy: Target) -> None:
    contract = toy.contracts["unlock_inventory"]
    fresh_only = generate_probes(toy.adapter, contract, 0, "t")
    assert not [p for p in fresh_only if p.kind == "happy"]  # the inventory starts unlocked
    probes = generate_probes(toy.adapter, contract, 0, "t", toy.contracts)
    (happy,) = [p for p in probes if p.kind == "happy"]
    assert [s.tool for s in happy.setup] == ["lock_inventory"]
    record = tool_coverage(toy, "unlock_inventory")
    assert record.probes_signalled >= 1 and record.written_paths

"""Ledger schema 4 as a run writes it (issue 29, items 3-4): every scored pair records its
kill vector over the liveness corpus, the clauses the checker graded, and for every new
violation the probe that revealed it."""

from __future__ import annotations

from test_runner import drawn_and_frozen, harness, ledger, project

from harness.execution.draw import Corpus
from harness.execution.ledger import LEDGER_SCHEMA_VERSION, MissCause, PairStatus


def test_a_run_records_kill_vectors_graded_clauses_and_revealing_probes(tmp_path) -> None:
    root = project(tmp_path, per_operator=2)
    drawn_and_frozen(root)
    done = harness("run", "plans/small.yaml", "--workers", "1", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    corpus = Corpus.model_validate_json((root / "mutants/small/manifest.json").read_text())
    rows = ledger(root)
    assert rows and {r.schema_version for r in rows} == {LEDGER_SCHEMA_VERSION} == {4}
    for r in rows:
        calls = corpus.liveness["toy_domain"][r.tool]
        assert r.kill_vector is not None, r.pair_id
        assert r.live == bool(r.kill_vector)  # live = killed by some liveness call
        assert r.kill_vector == sorted(set(r.kill_vector))
        assert all(0 <= i < len(calls) for i in r.kill_vector)
        if r.miss_cause is MissCause.UNREACHED:
            assert r.kill_vector == []
        assert r.graded_clauses is not None
        if r.status is PairStatus.DETECTED:
            for v in r.new_violations:
                assert v.clause_id in r.graded_clauses
                assert v.probe is not None and v.probe.tool == r.tool
    detected = [r for r in rows if r.status is PairStatus.DETECTED]
    assert detected and any(r.kill_vector for r in rows)

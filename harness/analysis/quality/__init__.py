"""Contract quality you can measure: coverage of the advertised surface and the written
state (`coverage`), and agreement of two contract sets on one probe corpus (`agreement`).
Reads targets and contracts, and reuses the checker's probe search (never its verdicts).

It lives under `analysis` because it measures contracts for a person and never runs while a
pair is scored: `harness.execution.scope` leaves `harness/analysis/` out of a freeze's
`harness` group, so this code is no input of any freeze (as a top-level `harness/quality/`
it was, and every committed freeze would have failed to verify)."""

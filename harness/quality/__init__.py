"""Contract quality you can measure: coverage of the advertised surface and the written
state (`coverage`), and agreement of two contract sets on one probe corpus (`agreement`).
Reads targets and contracts, and reuses the checker's probe search (never its verdicts)."""

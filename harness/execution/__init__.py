"""Execution: from a plan to a ledger, pre-registered and reproducible.

plan (`plan`) -> draw (`draw`, `liveness`, `negative_controls`) -> freeze (`freeze`, `scope`,
`history`) -> run (`runner` writes each pair's `pair_scoring` result into `ledger`;
`executors`, `dask_executor`, `batch_host`, `isolation` decide where and in which process)
-> publish (`publish`).
Beside it: `baseline` (verdicts on the original tools), `miss_cause` (why a live mutant was
missed), `progress` (the progress bar).

Rule: every number of a run is a function of the plan, its seed and the freeze; the ledger
is the one durable record, and only `runner` writes it.
"""

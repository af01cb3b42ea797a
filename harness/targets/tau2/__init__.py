"""The tau2-bench target: one adapter per domain of the pinned `inspect-evals` port.

- `adapter.py`: `Tau2Adapter(domain)` and one zero-argument class per domain, registered as
  `tau2-airline`, `tau2-retail`, `tau2-telecom` (telecom: the agent's tools and the user's
  device tools, one target).
- `enumerate_tools.py`: `python -m harness.targets.tau2.enumerate_tools` finds, by probing,
  which tools change the database and writes `STATE_CHANGING_TOOLS.md`.
- `grader.py`: the grader arm (gold actions replayed, graded by the port's own scorers).
- `contracts/<domain>/<tool>.yaml`: the contracts, citing the installed port's tool
  docstrings (`tools.py`, `user_tools.py`) and the domain policy files.

Nothing here imports `inspect_evals` at import time (about 2 s): first use, once per process.
"""

"""The AgentDojo target: one adapter per suite of the pinned `agentdojo` package.

- `adapter.py`: `AgentDojoAdapter(suite, version)` and one zero-argument class per suite,
  registered as `agentdojo-banking`, `agentdojo-slack`, `agentdojo-travel`,
  `agentdojo-workspace`.
- `enumerate_tools.py`: `python -m harness.targets.agentdojo.enumerate_tools` finds, by
  probing, which tools change the environment and which snapshot paths are clock-dependent,
  and writes `STATE_CHANGING_TOOLS.md`.
- `contracts/<suite>/<tool>.yaml`: the contracts, citing the installed package's source.

Nothing here imports `agentdojo` at import time: the package pulls in every LLM SDK and
costs seconds, so the adapter imports it on first use, once per process.
"""

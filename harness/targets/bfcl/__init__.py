"""The BFCL multi-turn targets: one adapter per stateful API class of the pinned `bfcl-eval`.

- `adapter.py`: `BfclAdapter(slug)` and one zero-argument class per class, registered as
  `bfcl-file-system`, `bfcl-message`, `bfcl-posting`, `bfcl-ticket`, `bfcl-trading`,
  `bfcl-travel`, `bfcl-vehicle`.
- `state.py`: the public state as canonical JSON (parent links, sets, integer keys).
- `isolation.py`: module- and class-level state put back before every environment.
- `tasks.py`: the 200 tasks of multi_turn_base and their ground-truth calls, parsed.
- `enumerate_tools.py`: `python -m harness.targets.bfcl.enumerate_tools` finds, by probing,
  which tools change public state and writes `STATE_CHANGING_TOOLS.md`.
- `contracts/<slug>/<tool>.yaml`: the contracts, citing the function docs
  (`bfcl_eval/data/multi_turn_func_doc/*.json`, one doc a line) and the docstrings.

BFCL is held out (README): no plan draws, runs or scores a BFCL mutant yet.
"""

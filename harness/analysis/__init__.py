"""Scoring, statistics, tables, plots and comparison: from a run's ledger to the numbers a
paper cites. Offline and deterministic; nothing here runs a checker or a mutant.

  frame            the ledger as a pandas DataFrame (load_ledger, load_ledgers)
  statistics       Wilson, ICC, design effect, cluster bootstrap, evidence bounds
  scoring          the ledger frame → counts, rates per arm, operator, scope, tool, and the
                   grader arm (checker beside the target's own grader, where it has one)
  tables / render  tables as data; Markdown, LaTeX, CSV (from DataFrames) and rich
  macros           LaTeX macro names for every number
  plots            the forest plot of per-operator recall
  mutation_report  Stryker's mutation-testing-elements JSON
  runs             reading run folders (run.json, ledger.jsonl, drawn corpus)
  report, compare  the `harness report` and `harness compare` entry points
  quality          contract coverage and authoring agreement (`harness contracts coverage |
                   corpus | agree`): the one part that calls tools (probes), for a person,
                   never while a pair is scored
"""

from harness.analysis.compare import ComparisonResult, compare, comparison_table
from harness.analysis.frame import load_ledger, load_ledgers
from harness.analysis.report import ReportResult, main_tables, report
from harness.analysis.runs import RunMeta, load_run, load_run_meta

__all__ = [
    "ComparisonResult",
    "ReportResult",
    "RunMeta",
    "compare",
    "comparison_table",
    "load_ledger",
    "load_ledgers",
    "load_run",
    "load_run_meta",
    "main_tables",
    "report",
]

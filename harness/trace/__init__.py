"""Score at risk: from a confirmed defect to the task verdicts it can corrupt.

defect → fields (`fields`: from the compiled predicates of the violated clauses) → evaluator
read sites (`readsites`: a static extractor over the benchmark's own evaluation code) →
tasks with a basis and an oracle grounding (`basis`); gold-call tasks and whether their gold
path reaches the defect (`clauses`, `run`); repairs applied in memory like mutants and
validated by the checker (`repairs`); positive controls (`controls`); tables (`tables`).

Reads targets and contracts; of the checker it uses only the public `Checker.check`.
"""

from harness.trace.basis import Basis, Grounding
from harness.trace.readsites import MAX_HOPS, Evaluator, ReadSite, SiteKind, read_sites
from harness.trace.run import TraceResult, TraceRow, trace

__all__ = [
    "MAX_HOPS",
    "Basis",
    "Evaluator",
    "Grounding",
    "ReadSite",
    "SiteKind",
    "TraceResult",
    "TraceRow",
    "read_sites",
    "trace",
]

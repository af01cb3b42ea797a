"""The batch host: the isolated process in which a Dask worker scores its batches.

Started by `dask_executor.score_batch` as `python -m harness.execution.batch_host`. Protocol
on stdin/stdout, one pickle per message: it reads a `BatchSpec` and answers
`("refused", [HashMismatch...])` and exits, or `("ready", None)`; then, per batch, it reads
a list of pairs and answers `("outcome", PairOutcome)` per pair and `("done", None)`. It
exits at the end of stdin (its worker is gone), and is killed with its worker (the parent
whose pid is its one argument: `isolation.die_with_parent`); its pair children carry the
local executor's own backstop.
"""

from __future__ import annotations

import os
import pickle
import sys

from harness.execution.dask_executor import BatchSpec, installed_mismatches, send
from harness.execution.executors import score_pairs
from harness.execution.isolation import die_with_parent
from harness.execution.pair_scoring import complete_context, new_context


def main() -> None:
    die_with_parent(int(sys.argv[1]))
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print must not corrupt the protocol
    requests = sys.stdin.buffer
    spec: BatchSpec = pickle.load(requests)
    mismatches = installed_mismatches(spec)
    if mismatches:
        send(answers, ("refused", mismatches))
        return
    ctx = new_context(
        spec.plan,
        spec.freeze_id,
        spec.post_hoc,
        spec.liveness,
        None,
        spec.checker,
        spec.recorded_probes,
    )
    if spec.prepared is not None:
        spec.prepared.into(ctx)
        ctx.cold = True  # what preparing it here would have left warm: before each fork
    send(answers, ("ready", None))
    while True:
        try:
            pairs = pickle.load(requests)
        except EOFError:
            return
        if spec.prepared is None:  # a client that sends no set-up: prepared here, per batch
            complete_context(ctx, pairs, None)
        score_pairs(ctx, pairs, 1, lambda outcome: send(answers, ("outcome", outcome)))
        send(answers, ("done", None))


if __name__ == "__main__":
    main()

"""The original tools' set-up computed by target in helper processes, into the set-up cache.

A run's first start on a freeze computes its set-up (baselines, liveness observations,
grader verdicts, coverage and reuse: `pair_scoring.complete_context`) before it scores a
pair, in the one process that called `harness run`, while the cores its workers will use
wait. With more than one worker and a set-up cache the run may trust (a fixed hash seed),
the targets whose set-up the cache lacks are shared out among as many processes, forked
from the run's with every target loaded. Each takes the next target as it finishes one,
those with the most tools first, computes that target's set-up for its pairs exactly as
the run would, and writes it to the freeze's set-up cache. The run then completes its own
context from the cache, as a rerun does, and counts what the helpers wrote as computed.

What a helper computes reaches a row only through the cache, which verifies each entry on
reading, and a target's set-up depends on that target alone (its key parts name it), so
the rows are those of a run without helpers. A helper that fails, or dies, leaves its
target to the run, which computes what the cache lacks itself. Helpers ignore Ctrl-C and
SIGTERM and die with the run; a run stopped during its set-up ends them first.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.execution.isolation import die_with_parent, end_processes, ignore_stop_signals

SETUP_LOG = logging.getLogger("harness.setup")

# what a helper works from, set in the run's process just before the helpers are forked
# (each inherits it): the context, the pairs by target, and the function that completes a
# context for some pairs (`pair_scoring.complete_context`, passed in: no import cycle)
_WORK: tuple[Any, dict[str, list[Any]], Callable[[Any, list[Any], Path | None], None]] | None = None


@dataclass
class Helped:
    """What the helpers did: the entries they stored and refused by kind, the files they
    wrote, and the targets they could not complete (left to the run)."""

    processes: int
    stored: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)
    failed: list[str] = field(default_factory=list)


def compute_in_helpers(
    ctx: Any,
    pairs: list[Any],
    processes: int,
    needed: Callable[[str, list[Any]], bool],
    complete: Callable[[Any, list[Any], Path | None], None],
) -> Helped | None:
    """Compute, in up to `processes` forked helpers, the set-up of each target of `pairs`
    that `needed` says the cache lacks, into `ctx.setup`; None when fewer than two targets
    need it or fewer than two processes are allowed (the run computes its set-up itself)."""
    global _WORK
    groups: dict[str, list[Any]] = {}
    for pair in pairs:
        groups.setdefault(pair.mutant.target, []).append(pair)
    todo = [name for name, its in groups.items() if needed(name, its)]
    count = min(processes, len(todo))
    if count < 2:
        return None
    todo.sort(key=lambda name: -len({pair.tool for pair in groups[name]}))  # stable
    SETUP_LOG.info(
        "helpers: %d targets' original tools prepared in %d processes, into the set-up cache",
        len(todo),
        count,
    )
    began = time.monotonic()
    helped = Helped(count)
    _WORK = (ctx, groups, complete)
    pool = ProcessPoolExecutor(
        count,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_helper_started,
        initargs=(os.getpid(),),
    )
    try:
        for name, stored, refused, written, error in pool.map(_set_up_target, todo):
            for kind, n in stored.items():
                helped.stored[kind] = helped.stored.get(kind, 0) + n
            for kind, n in refused.items():
                helped.refused[kind] = helped.refused.get(kind, 0) + n
            helped.written.update(written)
            if error is not None:
                helped.failed.append(f"{name} ({error})")
    except BrokenProcessPool:  # a helper died: what it did not write, the run computes
        helped.failed.append("a helper process ended abnormally")
    except BaseException:  # Ctrl-C or SIGTERM in the run: no helper outlives its set-up
        pool.shutdown(wait=False, cancel_futures=True)
        end_processes([child.pid for child in multiprocessing.active_children() if child.pid])
        raise
    finally:
        _WORK = None
    pool.shutdown(wait=True)
    SETUP_LOG.info(
        "helpers: done in %.1f s%s",
        time.monotonic() - began,
        "; left to the run: " + ", ".join(helped.failed) if helped.failed else "",
    )
    return helped


def _helper_started(parent: int) -> None:
    die_with_parent(parent)
    ignore_stop_signals()  # the run ends its helpers itself
    SETUP_LOG.disabled = True  # the run says what its set-up does


def _set_up_target(
    name: str,
) -> tuple[str, dict[str, int], dict[str, int], list[str], str | None]:
    """In a helper: `name`'s set-up for its pairs, into the cache; (name, stored, refused,
    files written, the error that stopped it or None)."""
    assert _WORK is not None, "a helper is forked from a run that set _WORK"
    ctx, groups, complete = _WORK
    ctx.setup = type(ctx.setup)(ctx.setup.folder, ctx.setup.freeze_id)  # this target's counts
    error = None
    try:
        complete(ctx, groups[name], None)
    except Exception as exc:  # the run computes it again, and raises it there if it must
        error = f"{type(exc).__name__}: {exc}"
    return name, ctx.setup.stored, ctx.setup.rejected, ctx.setup.written, error

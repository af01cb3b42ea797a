"""Grader-arm tables: checker recall beside the benchmark's own grader on the same mutants, and
the tasks whose verdict depends on each tool."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.macros import macro_word
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    ALL,
    GraderRow,
    GraderToolRow,
)
from harness.analysis.table_model import (
    DEFF_NOTE,
    Column,
    Kind,
    Row,
    Table,
)

GRADER_NOTE = (
    "grader = the target's own grader, replayed with no model on the ground truth of every "
    "task that calls the pair's tool (AgentDojo: each user task's utility check; tau2-bench: "
    "the port's db_match and env_assertions per task, where db_match rebuilds its expected "
    "database with the same, mutated, tools, so it cannot change its verdict under a "
    "deterministic mutant); caught = some task's verdict changed under the mutant."
)


def _grader_key(arm: str, operator: str) -> str:
    if arm == ALL:
        return "All"
    return macro_word(arm) + "All" if operator == ALL else macro_word(operator)


def grader_table(grader: Sequence[GraderRow], meta: RunMeta) -> Table:
    columns = (
        Column("arm", "arm", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("checker detected", "checker_detected", Kind.INT, "CheckerDetected"),
        Column("checker recall", "checker_recall", Kind.FLOAT, "Checker"),
        Column("checker 95% CI (deff)", "checker_recall_ci", Kind.INTERVAL, "Checker"),
        Column("grader caught", "grader_caught", Kind.INT, "Caught"),
        Column("grader recall", "grader_recall", Kind.FLOAT, ""),
        Column("grader 95% CI (deff)", "grader_recall_ci", Kind.INTERVAL, ""),
        Column("both", "both", Kind.INT, "Both"),
        Column("checker only", "checker_only", Kind.INT, "CheckerOnly"),
        Column("grader only", "grader_only", Kind.INT, "GraderOnly"),
        Column("neither", "neither", Kind.INT, "Neither"),
    )
    sections = {"closed_world": 0, "open_world": 1, ALL: 2}
    rows = tuple(
        Row(
            (
                r.arm,
                r.operator,
                r.n,
                r.checker.x,
                r.checker.value,
                (r.checker.clustered.lo, r.checker.clustered.hi),
                r.grader.x,
                r.grader.value,
                (r.grader.clustered.lo, r.grader.clustered.hi),
                r.both,
                r.checker_only,
                r.grader_only,
                r.neither,
            ),
            _grader_key(r.arm, r.operator),
            r.post_hoc,
            sections.get(r.arm, 3),
        )
        for r in grader
    )
    return Table(
        "grader_arm",
        "Grader arm: checker recall beside the target's own grader on the same mutants",
        meta.freeze_id,
        columns,
        rows,
        "GraderRecall",
        (
            "n = closed- and open-world pairs with a grader verdict (targets with a grader), "
            "less infra_error; pairs that never reached the replay (compile_error, timeout, "
            "crash) have none and are not counted.",
            GRADER_NOTE,
            "checker recall = detected / n; grader recall = caught / n; both, checker only, "
            "grader only and neither split n (an untestable pair is not detected).",
            DEFF_NOTE,
            "all = the arm's operators pooled; all / all pools both arms.",
        ),
        run_post_hoc=meta.post_hoc,
    )


TASKS_TEXT_CHARS = 60  # a longer task list is cut, and the rest counted


def task_list_text(tasks: Sequence[str], limit: int = TASKS_TEXT_CHARS) -> str | None:
    """`a, b, c` or, past `limit` characters, `a, b, … (+3 more)`; None when empty."""
    if not tasks:
        return None
    shown = [tasks[0]]  # at least one, however long
    for task in tasks[1:]:
        if len(", ".join([*shown, task])) > limit:
            break
        shown.append(task)
    rest = len(tasks) - len(shown)
    return ", ".join(shown) + (f", … (+{rest} more)" if rest else "")


def grader_tasks_table(tools: Sequence[GraderToolRow], meta: RunMeta) -> Table:
    columns = (
        Column("target", "target", Kind.TEXT),
        Column("tool", "tool", Kind.TEXT),
        Column("pairs", "pairs", Kind.INT, "Pairs"),
        Column("grader caught", "grader_caught", Kind.INT, "Caught"),
        Column("tasks", "tasks", Kind.INT, "Tasks"),
        Column("changed tasks", "task_ids", Kind.TEXT, width="6cm"),
    )
    targets = sorted({r.target for r in tools})
    rows = tuple(
        Row(
            (r.target, r.tool, r.pairs, r.caught, len(r.tasks), task_list_text(r.tasks)),
            macro_word(r.target) + macro_word(r.tool),
            r.post_hoc,
            targets.index(r.target),
        )
        for r in tools
    )
    return Table(
        "grader_tasks_by_tool",
        "Tasks whose utility verdict a mutant of the tool changed",
        meta.freeze_id,
        columns,
        rows,
        "GraderTasks",
        (
            "pairs = closed- and open-world pairs of the tool with a grader verdict, less "
            "infra_error; grader caught = those whose mutant changed some task's verdict.",
            GRADER_NOTE,
            "tasks = the union of the changed tasks over the tool's pairs, as observed: the "
            "benchmark scores a defective tool corrupted. A list longer than "
            f"{TASKS_TEXT_CHARS} characters is cut, with the count of the rest.",
        ),
        run_post_hoc=meta.post_hoc,
    )

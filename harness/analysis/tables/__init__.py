"""The report's tables, one module per kind of table (closed world, controls, open world,
grader arm, predictions, per tool), each a pure function from the counts `scoring` computes
to a `Table` (`harness.analysis.table_model`); `build_tables` makes every table of a run in
a fixed order. The names are re-exported here."""

from harness.analysis.table_model import Cell, Column, Interval, Kind, Row, Table
from harness.analysis.tables.build import build_tables
from harness.analysis.tables.closed_world import (
    axis_table,
    closed_cause_table,
    pool_table,
    recall_table,
    with_empty_rows,
)
from harness.analysis.tables.controls import (
    flag_precision_table,
    negative_control_table,
    specificity_table,
)
from harness.analysis.tables.grader import grader_table, grader_tasks_table, task_list_text
from harness.analysis.tables.open_world import cause_table, escape_table
from harness.analysis.tables.per_tool import tool_table
from harness.analysis.tables.predictions import predictions_table

__all__ = [
    "Cell",
    "Column",
    "Interval",
    "Kind",
    "Row",
    "Table",
    "axis_table",
    "build_tables",
    "cause_table",
    "closed_cause_table",
    "escape_table",
    "flag_precision_table",
    "grader_table",
    "grader_tasks_table",
    "negative_control_table",
    "pool_table",
    "predictions_table",
    "recall_table",
    "specificity_table",
    "task_list_text",
    "tool_table",
    "with_empty_rows",
]

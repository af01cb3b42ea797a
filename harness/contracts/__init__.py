"""Contracts: what a tool promises, written as YAML a person reviews, read as typed models.

- `model`: the contract model (one file per tool; clauses, arguments, frames, schema version).
- `loader`: YAML into `Contract`, each error naming file, field and fix.
- `predicate/`: the predicate language clauses are written in (its docstring is the reference).
- `validator`: `harness contracts validate`, every check a contract must pass.
- `labels`: the observation failure labels clauses are tagged with.

Rule: nothing here runs a tool; a checker (harness.checker) reads these models.
"""

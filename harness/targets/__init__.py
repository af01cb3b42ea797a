"""Targets: the benchmarks whose tools are checked, each behind one `Adapter`.

- `adapter`: the adapter protocol (tools, state, reset, the grader for targets with one).
- `registry`: targets by name (entry points or `package.module:Class`) with their contracts.
- `equality`: the one canonical equality, and the path patterns that mask volatile state.
- `toy`: the built-in toy target; `agentdojo/`: AgentDojo's four suites; `tau2/`: tau2-bench's
  airline, retail and telecom domains.

Rule: the harness reaches a benchmark only through its adapter.
"""

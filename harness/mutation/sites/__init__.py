"""Mutation sites: which functions a tool's call reaches, their source text, and what an
operator may know about them.

Everything here reads the installed source with `ast`; no target code runs (modules are
only looked up in `sys.modules` / imported to find their files, and the tools' modules are
already imported by the adapter).

Call resolution, from a site's body, transitively:
- `name(...)`: the module-level function `name` of the same module, or the one imported
  from another module of the target's package (`from .bank import name`); a class name
  resolves to its `__init__` when the source defines one;
- `mod.name(...)` with `mod` an imported module of the package: that module's function;
- `x.method(...)`: when the class of `x` is known statically (`self`, a parameter or a
  local annotated or constructed as a target class, an attribute or container element
  whose annotation names one), the `method` that class defines or inherits from a target
  base, plus overrides in its target subclasses; otherwise every method named `method` of
  every class of the package (sound for duck typing, at the price of unreached pairs).
Functions passed as values (callbacks, `map(f, ...)`) are not followed.

The state-write analysis (`state_writes`) is shared by the operators and by
`SiteContext.writer_names`, so "what counts as a write" has one definition. A write whose
written fields are all volatile (`SiteContext.volatile_fields`: masked by every comparison)
is not a write, and a helper whose only writes are volatile is not a writer.

Reset-path pairing (`written_fields`, `restored_fields`, `changed_statements`): which
fields a tool's call can leave behind, and which fields a reset step restores.

Layout: `source` (vocabulary and source text), `index` (the package index), `facts`
(statements, locals, writes, guards of one function), `resolver` (call resolution,
`tool_sites`), `context` (`site_context`), `reset_pairing`. This package re-exports every
public name of them.
"""

from __future__ import annotations

from harness.mutation.sites.context import (
    invariant_fields,
    parse_function,
    site_context,
    volatile_fields,
)
from harness.mutation.sites.facts import (
    Guard,
    StateWrite,
    WriteCall,
    chain_fields,
    fresh_locals,
    guard_list,
    guards,
    is_guard,
    is_refusal,
    local_bindings,
    only_volatile,
    own_nodes,
    own_statements,
    parameter_names,
    returns_value,
    root_name,
    state_writes,
    statements_in,
    write_call,
)
from harness.mutation.sites.index import (
    package_views,
)
from harness.mutation.sites.reset_pairing import (
    changed_statements,
    restored_fields,
    written_fields,
)
from harness.mutation.sites.resolver import (
    reset_sites,
    tool_sites,
)
from harness.mutation.sites.source import (
    FRESH_CALLS,
    IN_PLACE_FUNCTIONS,
    MUTATING_METHODS,
    SCOPE_NODES,
    FunctionNode,
    dedent_lines,
    function_source,
    site_key,
)

__all__ = [
    "FRESH_CALLS",
    "IN_PLACE_FUNCTIONS",
    "MUTATING_METHODS",
    "SCOPE_NODES",
    "FunctionNode",
    "Guard",
    "StateWrite",
    "WriteCall",
    "chain_fields",
    "changed_statements",
    "dedent_lines",
    "fresh_locals",
    "function_source",
    "guard_list",
    "guards",
    "invariant_fields",
    "is_guard",
    "is_refusal",
    "local_bindings",
    "only_volatile",
    "own_nodes",
    "own_statements",
    "package_views",
    "parameter_names",
    "parse_function",
    "reset_sites",
    "restored_fields",
    "returns_value",
    "root_name",
    "site_context",
    "site_key",
    "state_writes",
    "statements_in",
    "tool_sites",
    "volatile_fields",
    "write_call",
    "written_fields",
]

"""Mutation: the functions a tool's call reaches, and the operators that change them.

- `model`: sites, mutants and the `Operator` interface (with its `examples`);
  `ast_operator`: the base of the stdlib-`ast` operators and the span-preserving renderer.
- `registry`: operators by name, every family loaded one way (`all_operators`).
- `closed_world` (`M-`, one defect class each), `control_operators` (`C-`, behaviour kept),
  `open_world` (`CR-`/`MM-`, the Cosmic Ray and mutmut bridges): the operator families.
- `sites`, `refusals`, `checks`: what an operator may know about a function (its writes,
  guards, refusals, integrity and validity checks).
- `enumerate`, `screen`, `empty`: every (mutant, tool) pair, screened, and why a pool is empty.
- `apply`: a mutant applied in memory and undone.

Rule: operators work on the text of one function and never import the checker; the
defect-class names come from `harness.defects`.
"""

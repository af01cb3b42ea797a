"""Run the reference checker on blind contracts alone (never on a target's shipped set).

`Target(adapter, {tool: contract})` holds only the blind contract, so no shipped contract
is loaded, compiled or read. Usage: `python agreement/blind/sanity_check.py FILE.yaml ...`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.checker import ReferenceChecker
from harness.contracts.loader import load_contract
from harness.targets.registry import Target, resolve_adapter


def main(paths: list[str]) -> None:
    for name in paths:
        path = Path(name)
        contract = load_contract(path)
        target = Target(
            resolve_adapter(contract.target), {contract.tool: contract}, {contract.tool: path}
        )
        report = ReferenceChecker().check(target, [contract.tool]).tools[0]
        print(f"{contract.target}/{contract.tool}: {report.verdict} ({report.probes_run} probes)")
        for clause in report.clauses:
            if clause.verdict != "CONFORMS":
                why = clause.defect_class or clause.reason
                print(f"  {clause.clause_id} {clause.verdict} {why}")


if __name__ == "__main__":
    main(sys.argv[1:])

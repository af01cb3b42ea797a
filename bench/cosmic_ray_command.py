"""Cosmic Ray's test command in bench/throughput.py: the frozen checker on the rewritten file.

    python bench/cosmic_ray_command.py SPEC.json

Cosmic Ray has just rewritten one module of the target copy on disk (its local distributor
runs this once per work item, in a fresh process). The command finds which module differs
from the pristine copy, looks its content hash up in SPEC (built by throughput.py) to learn
the mutant and the tools of its pairs, imports the target from the copy, runs the plan's
checker on those tools and compares with the baseline verdicts of the original tools.
Exit 1 on a VIOLATES the baseline lacked (Cosmic Ray: killed), 0 otherwise (survived; also
when the rewritten module no longer imports, which is logged), 3 when the rewritten file
matches no mutant of SPEC (an infrastructure fault). One JSON line
per run is appended to SPEC's log so the bench can check what was tested.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path


def main() -> int:
    began = time.perf_counter()
    spec = json.loads(Path(sys.argv[1]).read_text())
    copy = Path(spec["copy_root"])
    sys.path.insert(0, str(copy))  # the rewritten copy shadows the installed target

    changed = []
    for module_path, pristine in spec["pristine"].items():
        text = (copy / module_path).read_bytes()
        if hashlib.sha256(text).hexdigest() != pristine:
            changed.append(hashlib.sha256(text).hexdigest())
    record: dict[str, object] = {"changed": changed}
    mutant = spec["mutants"].get(changed[0]) if len(changed) == 1 else None
    if mutant is None:
        record["error"] = "the rewritten file matches no mutant of the bench"
        return _finish(spec, record, began, 3)
    record["mutant_id"] = mutant["mutant_id"]

    from harness.execution.freeze import checker_for
    from harness.execution.plan import load_plan
    from harness.execution.recorded_calls import attach_probes
    from harness.targets.registry import load_target

    try:
        target = load_target(spec["target"])  # imports the rewritten module
    except Exception as exc:  # the module no longer imports: no verdict, so no new VIOLATES
        record["import_error"] = f"{type(exc).__name__}: {exc}"
        return _finish(spec, record, began, 0)
    source = Path(target.adapter.source_root()).resolve()
    if source != copy.resolve():
        record["error"] = f"target imported from {source}, not from the copy {copy}"
        return _finish(spec, record, began, 3)
    # the probe half of the recorded calls, as the harness's pairs get it (bench --recorded)
    attach_probes({target.name: target}, {target.name: spec.get("recorded_probes", {})})
    checker = checker_for(load_plan(Path(spec["plan"])))
    detected = []
    try:
        report = checker.check(target, mutant["tools"])
    except Exception as exc:  # the harness scores a checker crash as missed: do the same
        record["checker_crash"] = f"{type(exc).__name__}: {exc}"
        return _finish(spec, record, began, 0)
    for tool in mutant["tools"]:
        baseline = set(spec["baseline_violations"][tool])
        if any(c.clause_id not in baseline for c in report.tool(tool).violations()):
            detected.append(tool)
    record["detected_tools"] = detected
    return _finish(spec, record, began, 1 if detected else 0)


def _finish(spec: dict, record: dict[str, object], began: float, code: int) -> int:
    record["exit"] = code
    record["seconds"] = round(time.perf_counter() - began, 4)
    with open(spec["log"], "a", encoding="utf-8") as log:
        log.write(json.dumps(record, sort_keys=True) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())

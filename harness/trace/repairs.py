"""Repairs of confirmed defects: unified diffs under `repairs/<target>/<name>.diff`, each with
`<name>.yaml` beside it (the tool, the violated clauses it repairs, and optionally the
positive-control construction, see `harness/trace/controls.py`).

A repair is applied in memory exactly like a mutant: the diff is applied to the installed
file's text, the function it changes (one of the tool's sites) is cut out of the patched
text, and `harness.mutation.apply.applied` rebinds it. Nothing is written to disk.

A repair is valid when, with it applied, the checker CONFORMs on every clause it names that
the baseline has violated and raises no VIOLATES the unrepaired tool did not have; otherwise
it is refused with one line. A repair none of whose clauses the baseline has violated is
stale (the defect is gone, e.g. its contract was narrowed): `harness trace` records it as
such and neither validates nor runs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.contracts.loader import load_model
from harness.errors import Problem, UserError
from harness.mutation.apply import applied
from harness.mutation.model import Arm, Mutant, sha256_text
from harness.mutation.sites import dedent_lines, tool_sites
from harness.targets.registry import Target

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class ControlCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Construction(BaseModel):
    """A positive-control path: a gold action sequence kept unchanged, with `calls` inserted
    before its first call to `before` (or appended at its end when `before` is None). An
    argument value `$anchor.NAME` is argument NAME of that gold call."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1)
    before: str | None = None
    calls: list[ControlCall] = Field(min_length=1)


class RepairSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str
    clauses: list[str] = Field(min_length=1, description="The violated clauses it repairs")
    text: str = Field(min_length=1, description="What the repair changes and why")
    control: Construction | None = None


@dataclass(frozen=True)
class Repair:
    name: str
    target: str
    diff_path: Path
    spec: RepairSpec
    mutant: Mutant  # the repaired function, applied like a mutant


def _hunks(text: str, path: Path) -> tuple[str, list[tuple[int, int, list[str]]]]:
    """(file, [(old start, old length, hunk lines)]) of a one-file unified diff."""
    file_name = None
    hunks: list[tuple[int, int, list[str]]] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("+++ "):
            file_name = line[4:].strip().split("\t")[0]
            file_name = file_name[2:] if file_name.startswith("b/") else file_name
        elif line.startswith("--- "):
            continue
        elif (match := _HUNK.match(line)) is not None:
            hunks.append((int(match.group(1)), int(match.group(2) or 1), []))
        elif hunks and line[:1] in (" ", "+", "-"):
            hunks[-1][2].append(line)
        elif hunks and line.startswith("\\"):
            continue
    if file_name is None or not hunks:
        raise UserError(
            Problem(str(path), "diff", "is not a unified diff of one file", "write it with diff -u")
        )
    return file_name, hunks


def _changed_lines(hunks: list[tuple[int, int, list[str]]]) -> list[int]:
    """Old-file line numbers a diff removes or inserts at (context lines excluded)."""
    out = []
    for start, _length, body in hunks:
        line = start
        for text in body:
            if text[:1] == "-":
                out.append(line)
            elif text[:1] == "+":  # inserted after the line before it
                out.append(max(line - 1, start))
                continue
            line += 1
    return out


def _patch(lines: list[str], hunks: list[tuple[int, int, list[str]]], path: Path) -> list[str]:
    out = list(lines)
    for start, _length, body in reversed(hunks):
        old = [line[1:] for line in body if line[:1] in (" ", "-")]
        new = [line[1:] for line in body if line[:1] in (" ", "+")]
        index = start - 1
        if out[index : index + len(old)] != old:
            raise UserError(
                Problem(
                    str(path),
                    f"hunk at line {start}",
                    "does not match the installed file",
                    "regenerate the diff against the installed source",
                )
            )
        out[index : index + len(old)] = new
    return out


def load_repair(target: Target, diff_path: Path) -> Repair:
    spec_path = diff_path.with_suffix(".yaml")
    if not spec_path.is_file():
        raise UserError(
            Problem(str(diff_path), "spec", f"has no {spec_path.name} beside it",
                    "write the tool, the clauses it repairs and a text")
        )  # fmt: skip
    spec = load_model(spec_path, RepairSpec, "tool")  # one line per field, as contracts
    if spec.tool not in target.contracts:
        raise UserError(
            Problem(str(spec_path), "tool", f"{spec.tool!r} has no contract in {target.name}",
                    "name a tool of the target")
        )  # fmt: skip
    text = diff_path.read_text(encoding="utf-8")
    file_name, hunks = _hunks(text, diff_path)
    adapter = target.adapter
    # the tool's own sites first; a helper of another tool on the violating sequence too
    sites = [s for s in tool_sites(adapter, spec.tool) if s.file == file_name] + [
        s
        for tool in sorted(target.contracts)
        if tool != spec.tool
        for s in tool_sites(adapter, tool)
        if s.file == file_name
    ]
    changed = _changed_lines(hunks)
    first, last = min(changed), max(changed)
    site = next((s for s in sites if s.start_line <= first and last <= s.end_line), None)
    if site is None:
        raise UserError(
            Problem(str(diff_path), "hunks", f"lines {first}-{last} of {file_name} lie in no "
                    f"one function that {spec.tool} calls", "change one function per repair")
        )  # fmt: skip
    lines = (Path(adapter.source_root()) / file_name).read_text(encoding="utf-8")
    patched = _patch(lines.splitlines(keepends=True), hunks, diff_path)
    delta = len(patched) - len(lines.splitlines(keepends=True))
    source = dedent_lines(patched[site.start_line - 1 : site.end_line + delta])
    mutant = Mutant(
        id=sha256_text(f"repair\0{target.name}\0{diff_path.name}\0{text}")[:16],
        arm=Arm.CLOSED_WORLD,  # applied as a mutant is; it is scored by nobody
        operator=f"repair:{diff_path.stem}",
        defect_class=None,
        target=target.name,
        target_version=adapter.version(),
        site=site,
        occurrence=0,
        mutated_source=source,
        diff=text,
    )
    return Repair(diff_path.stem, target.name, diff_path, spec, mutant)


def load_repairs(target: Target, root: Path) -> list[Repair]:
    folder = root / target.name
    if not folder.is_dir():
        return []
    return [load_repair(target, path) for path in sorted(folder.glob("*.diff"))]


@contextmanager
def repaired(target: Target, repair: Repair) -> Iterator[None]:
    with applied(target.adapter, repair.mutant):
        yield


def validate(target: Target, repair: Repair, violated_before: set[str], checker: Any) -> set[str]:
    """Check the repaired tool; the clauses still violated. Refuses (UserError) a repair
    that leaves a named clause violated, or raises a violation the tool did not have."""
    with repaired(target, repair):
        report = checker.check(target, [repair.spec.tool])
    after = {c.clause_id for tool in report.tools for c in tool.violations()}
    # the named clauses the baseline has; a named clause it lacks is not the repair's to fix
    still = set(repair.spec.clauses) & violated_before & after
    new = after - violated_before
    if still or new:
        what = (
            f"does not repair: {', '.join(sorted(still))} still VIOLATES"
            if still
            else f"raises new violations: {', '.join(sorted(new))}"
        )
        raise UserError(
            Problem(str(repair.diff_path), "repair", what,
                    "fix the diff, or name only the clauses it makes CONFORM")
        )  # fmt: skip
    return after

"""Bad input found by fuzzing the command line (2026-12-06): each is refused by the command
itself with one line per problem naming file, field and fix, exit code 2, no traceback, and
nothing written or changed. Run in this process through `harness.cli.main`, the function the
`harness` command calls (the subprocess tests elsewhere cover the command's start)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_runner import SMALL_PLAN

from harness.cli import main
from harness.errors import USER_ERROR_EXIT, Problem, UserError

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "results" / "reference" / "closed_world" / "a3189e4d942db34b"


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under `folder` with its size and modification time (what a refusal must
    leave as it was)."""
    return {
        str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
    }


def refused(capsys, folder: Path, *argv: str) -> list[str]:
    """Run `harness ARGV` in `folder`; assert exit 2 and that `folder` is unchanged; return
    the error lines."""
    before = listing(folder)
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == USER_ERROR_EXIT, err
    assert "Traceback" not in err
    assert listing(folder) == before, "a refused command changed the project"
    said = [line for line in err.splitlines() if line.strip()]
    lines = [line for line in said if not line.startswith("set-up: ")]  # `run`'s progress
    assert lines and all(line.startswith("error: ") and "; fix: " in line for line in lines), said
    return lines


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project with a plan file and a copy of a published run as its own run folder."""
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "small.yaml").write_text("name: small\n")
    run = tmp_path / "results" / "closed_world" / PUBLISHED.name
    shutil.copytree(PUBLISHED, run)
    monkeypatch.chdir(tmp_path)
    return tmp_path


RUN = f"results/closed_world/{PUBLISHED.name}"


def test_zero_workers_is_refused_not_taken_for_every_cpu(project, capsys):
    (line,) = refused(capsys, project, "run", "plans/small.yaml", "--workers", "0")
    assert line.startswith("error: --workers: workers: must be at least 1;")


@pytest.mark.parametrize(
    ("option", "value"), [("--assume", "5"), ("--icc", "nan"), ("--icc", "-1")]
)
def test_plan_check_refuses_a_rate_outside_0_to_1(project, capsys, option, value):
    (line,) = refused(capsys, project, "plan", "check", "plans/small.yaml", option, value)
    assert line.startswith(f"error: {option}: {option[2:]}: {value}") and "no proportion" in line


def test_json_output_to_a_folder_is_refused(project, capsys):
    (line,) = refused(capsys, project, "list", "targets", "--json", "plans")
    assert line.startswith("error: plans: --json: is a folder;")


def test_a_new_adapter_under_a_file_is_refused(project, capsys):
    (line,) = refused(capsys, project, "new-adapter", "mb", "--dir", "plans/small.yaml")
    assert line.startswith("error: plans/small.yaml: --dir: is a file, not a folder;")


def test_baseline_refuses_an_unknown_target_before_writing(project, capsys):
    (line,) = refused(capsys, project, "baseline", "nope", "--out", "results/bl")
    assert "nope" in line and "unknown target" in line
    assert not list((project / "results").glob(".bl*"))


@pytest.mark.parametrize("out", ["plans/small.yaml", "plans", "results"])
def test_baseline_refuses_to_replace_a_file_or_a_folder_that_is_no_baseline(project, capsys, out):
    (line,) = refused(capsys, project, "baseline", "toy_domain", "--out", out)
    assert line.startswith(f"error: {out}: --out: ")
    assert ("is a file" in line) if out.endswith(".yaml") else ("which is no baseline's" in line)


def _run_json(project: Path, edit) -> Path:
    path = project / RUN / "run.json"
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))
    return path


def test_publish_names_a_missing_field_of_run_json(project, capsys):
    _run_json(project, lambda m: m.pop("plan"))
    (line,) = refused(capsys, project, "publish", RUN)
    assert line.startswith(f"error: {RUN}/run.json: plan: unreadable run manifest: Field required;")


def test_report_names_a_missing_field_of_run_json_in_one_line(project, capsys):
    _run_json(project, lambda m: m.pop("freeze_id"))
    (line,) = refused(capsys, project, "report", RUN)
    assert line.startswith(f"error: {RUN}/run.json: freeze_id: unreadable run manifest: ")


@pytest.mark.parametrize("command", ["publish", "report"])
def test_run_json_that_is_no_json_is_one_line(project, capsys, command):
    (project / RUN / "run.json").write_text("{bad")
    (line,) = refused(capsys, project, command, RUN)
    assert line.startswith(f"error: {RUN}/run.json: <top>: unreadable run manifest: not JSON")


@pytest.mark.parametrize("command", ["publish", "report"])
@pytest.mark.parametrize(("field", "value"), [("post_hoc", "no"), ("pairs_total", "5")])
def test_run_json_values_are_of_the_kind_the_runner_writes(project, capsys, command, field, value):
    _run_json(project, lambda m: m.update({field: value}))
    (line,) = refused(capsys, project, command, RUN)
    assert line.startswith(f"error: {RUN}/run.json: {field}: ")


def test_publish_refuses_a_ledger_that_is_a_folder(project, capsys):
    (project / RUN / "ledger.jsonl").unlink()
    (project / RUN / "ledger.jsonl").mkdir()
    (line,) = refused(capsys, project, "publish", RUN)
    assert line.startswith(f"error: {RUN}/ledger.jsonl: ledger: is missing or not a file;")


def test_publish_refuses_a_run_already_published(project, capsys):
    published = project / "results" / "reference" / "closed_world" / PUBLISHED.name
    published.parent.mkdir(parents=True)
    shutil.move(project / RUN, published)
    (line,) = refused(capsys, project, "publish", str(published.relative_to(project)))
    assert "is a published run already" in line
    assert not (project / "results" / "reference" / "reference").exists()


def test_report_refuses_an_output_of_the_wrong_kind(project, capsys):
    (line,) = refused(capsys, project, "report", RUN, "--out", f"{RUN}/ledger.jsonl")
    assert line.startswith(f"error: {RUN}/ledger.jsonl: --out: is a file;")
    shutil.rmtree(project / RUN / "tables", ignore_errors=True)
    (project / RUN / "tables").write_text("x")
    (project / RUN / "report.html").unlink(missing_ok=True)
    (project / RUN / "report.html").mkdir()
    lines = refused(capsys, project, "report", RUN)
    assert [line.split(": --out: ")[0] for line in lines] == [
        f"error: {RUN}/tables",
        f"error: {RUN}/report.html",
    ]


@pytest.mark.parametrize(("command", "folder"), [("draw", "mutants"), ("run", "results")])
def test_a_file_where_a_project_folder_goes_is_refused(project, capsys, command, folder):
    plan = SMALL_PLAN.format(name="small", timeout=20, per_operator=1)
    (project / "plans" / "small.yaml").write_text(plan)  # valid: read before the folder
    shutil.rmtree(project / folder, ignore_errors=True)
    (project / folder).write_text("x")
    (line,) = refused(capsys, project, command, "plans/small.yaml")
    assert line.startswith(f"error: {project / folder}: {folder}: is a file, where a folder")


@pytest.mark.parametrize("folder", ["mutants", "results"])
def test_a_library_caller_meets_the_same_refusals(project, folder):
    """draw() and execute() check for themselves what the CLI used to check for them: a
    file in the project folder's place, a checker name that resolves to nothing."""
    from harness.execution.draw import draw
    from harness.execution.plan import load_plan
    from harness.execution.runner import execute

    path = project / "plans" / "small.yaml"
    path.write_text(SMALL_PLAN.format(name="small", timeout=20, per_operator=1))
    shutil.rmtree(project / folder, ignore_errors=True)
    (project / folder).write_text("x")
    with pytest.raises(UserError) as refusal:
        draw(load_plan(path), project) if folder == "mutants" else execute(path, workers=1)
    assert [(p.where, p.message) for p in refusal.value.problems] == [
        (folder, "is a file, where a folder goes")
    ]
    (project / folder).unlink()
    path.write_text(path.read_text().replace("seed: 7", "seed: 7\nchecker: nonexistent"))
    with pytest.raises(UserError) as refusal:
        draw(load_plan(path), project)
    ((field, message),) = [(p.where, p.message) for p in refusal.value.problems]
    assert field == "checker" and "unknown checker" in message, message
    assert not (project / "mutants").exists() or not any((project / "mutants").iterdir())


# --- plans, draws and freeze records (harness/execution: a freeze's scope) ----------------


@pytest.fixture
def small(tmp_path, monkeypatch) -> Path:
    """A project holding the toy plan of test_runner (not drawn)."""
    (tmp_path / "plans").mkdir()
    plan = SMALL_PLAN.format(name="small", timeout=20, per_operator=1)
    (tmp_path / "plans" / "small.yaml").write_text(plan)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _edit(root: Path, old: str, new: str) -> None:
    plan = root / "plans" / "small.yaml"
    text = plan.read_text()
    assert old in text
    plan.write_text(text.replace(old, new))


def test_freeze_refuses_a_plan_whose_draw_settings_changed_since_the_draw(small, capsys):
    assert main(["draw", "plans/small.yaml"]) == 0
    _edit(small, "seed: 7", "seed: 8")
    (line,) = refused(capsys, small, "freeze", "plans/small.yaml")
    assert line.startswith("error: plans/small.yaml: draw settings: changed since the draw")
    _edit(small, "seed: 8", "seed: 7")  # back as drawn; a prediction added since is no change
    (small / "plans" / "small.yaml").write_text(
        (small / "plans" / "small.yaml").read_text() + "predictions:\n  precision_floor: 0.5\n"
    )
    capsys.readouterr()
    assert main(["freeze", "plans/small.yaml"]) == 0, capsys.readouterr().err


def test_a_draw_whose_predictions_refuse_writes_nothing(small, capsys):
    (small / "plans" / "small.yaml").write_text(
        (small / "plans" / "small.yaml").read_text()
        + "predictions:\n  undecidable: error\n  recall_floor: {M-PHANTOM: 0.99}\n"
    )
    lines = refused(capsys, small, "draw", "plans/small.yaml")
    assert all("can never hold" in line for line in lines), lines
    assert not (small / "mutants").exists()


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("seed: 7", "seed: true", "seed: "),
        ("seed: 7", "seed: '7'", "seed: "),
        ("timeout_seconds: 20", "timeout_seconds: .inf", "timeout_seconds: "),
        (
            "liveness_probes_per_tool: 4",
            "liveness_probes_per_tool: 1.0",
            "liveness_probes_per_tool: ",
        ),
        (
            "liveness_probes_per_tool: 4",
            "liveness_probes_per_tool: 1000000000",
            "liveness_probes_per_tool: ",
        ),
        (
            "draw_per_operator: 1",
            "draw_per_operator: true",
            "arms[closed_world].draw_per_operator: ",
        ),
        # an arm's tool or operator pattern named the arm where the file goes
        ("tools: [deposit,", "tools: [nope, deposit,", "arms[closed_world].tools: 'nope' has no"),
        ("operators: [M-PHANTOM,", "operators: [Q-*, M-PHANTOM,", "arms[closed_world].operators: "),
    ],
)
def test_a_plan_value_the_draw_refuses_is_named_in_the_plan_file(small, capsys, old, new, says):
    _edit(small, old, new)
    (line,) = refused(capsys, small, "draw", "plans/small.yaml")
    assert line.startswith(f"error: plans/small.yaml: {says}"), line


@pytest.mark.parametrize(
    ("command", "file", "text"),
    [
        ("run", "plans/small.freeze.json", "{bad"),
        ("run", "plans/small.freeze.json", "[]"),
        ("freeze", "mutants/small/manifest.json", '{"plan": "small"}'),
    ],
)
def test_a_broken_record_or_manifest_is_one_line_per_field(small, capsys, command, file, text):
    assert main(["draw", "plans/small.yaml"]) == 0
    assert main(["freeze", "plans/small.yaml"]) == 0
    (small / file).write_text(text)
    capsys.readouterr()
    lines = refused(
        capsys, small, command, "plans/small.yaml", *(["--workers", "1"] * (command == "run"))
    )
    assert all(line.startswith(f"error: {small / file}: ") for line in lines), lines


@pytest.mark.parametrize(
    ("old", "new", "field", "says"),
    [
        ("seed: 7", "seed: 7\nchecker: nonexistent", "checker", "unknown checker"),
        ("seed: 7", "seed: 7\nchecker: harness.cli:main", "checker", "which is no class"),
        (
            "seed: 7",
            "seed: 7\ncomparison_checkers: [static-scanner, nope]",
            "comparison_checkers[1]",
            "unknown checker",
        ),
    ],
)
def test_draw_refuses_a_checker_name_that_names_no_checker(small, capsys, old, new, field, says):
    _edit(small, old, new)
    (line,) = refused(capsys, small, "draw", "plans/small.yaml")
    assert line.startswith(f"error: plans/small.yaml: {field}: ") and says in line, line


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (
            "arms:\n  - name: closed_world",
            "arms:\n  - name: ../x",
            "arms[../x].name: String should match pattern",
        ),
        ("operators: [M-PHANTOM, M-PRECOND,", "operators: [M-PHANTOM, M-PHANTOM,", "twice"),
        ("tools: [deposit, transfer,", "tools: [deposit, deposit,", "twice"),
        ("seed: 7", "seed: 7\nstatistics: [wilson, wilson]", "twice"),
    ],
)
def test_a_plan_value_that_cannot_be_meant_is_refused(small, capsys, old, new, says):
    _edit(small, old, new)
    lines = refused(capsys, small, "draw", "plans/small.yaml")
    assert any(says in line for line in lines), lines


@pytest.mark.parametrize("command", ["draw", "plan check"])
def test_a_key_written_twice_is_refused_not_the_last_one_taken(small, capsys, command):
    _edit(small, "seed: 7", "seed: 7\nseed: 8")
    (line,) = refused(capsys, small, *command.split(), "plans/small.yaml")
    assert line.startswith("error: plans/small.yaml: line ") and "'seed' written twice" in line


QUOTE = "write the value in that form, or make it a string: quote it, with no tag"


@pytest.mark.parametrize(
    ("value", "says", "fix"),
    [
        ("seed: !!int abc", "'abc' cannot be read as !!int (invalid literal for int()", QUOTE),
        ("seed: !!float abc", "'abc' cannot be read as !!float", QUOTE),
        ("seed: !!timestamp 2001-13-40", "'2001-13-40' cannot be read as !!timestamp", QUOTE),
        ("seed: !!int", "'' cannot be read as !!int", QUOTE),
        ("seed: !!bool x", "'x' cannot be read as !!bool", QUOTE),
        ("seed: !!timestamp x", "'x' cannot be read as !!timestamp", QUOTE),
        ("seed: !!int {a: 1}", "expected a scalar node, but found mapping", "fix the YAML"),
        # the tag implied, not written: the value is to be quoted
        ("seed: 0b_", "'0b_' cannot be read as !!int", QUOTE),
        ("seed: [2024-02-30]", "'2024-02-30' cannot be read as !!timestamp", QUOTE),
        (f"seed: !!int 1{'0' * 60}x", f"'1{'0' * 36}...' cannot be read as !!int (", QUOTE),
        (f"seed: 1{'0' * 5000}", "cannot be read as !!int (Exceeds the limit (4300 digits)", QUOTE),
        ("seed: !!set {1, 2}", "!!set is no form the harness reads", "write a list"),
        ("seed: !!omap [{a: 1}]", "!!omap is no form the harness reads", "write a mapping"),
        # merge keys are never built one by one: refused on the composed document
        ("seed: 7\n<<: !!omap [{seed: 4}]", "!!omap is no form the harness reads", "write a"),
        ("seed: 7\n<<: !!set {seed}", "!!set is no form the harness reads", "write a list"),
        ("seed: &a [1, *a]", "the collection here holds an alias of itself", "write the value"),
        ("seed: 7\n!!set a: 1", "!!set is no form the harness reads", "write a list"),  # a key
    ],
)
def test_a_tag_whose_value_cannot_be_built_is_one_line(small, capsys, value, says, fix):
    """PyYAML's constructors raise ValueError, KeyError, IndexError, ... for these, no
    YAMLError: each was a traceback. A set has no order: drawn from, it would draw by the
    hash seed. A merged set took its members for keys with no value."""
    _edit(small, "seed: 7", value)
    (line,) = refused(capsys, small, "plan", "check", "plans/small.yaml")
    assert line.startswith("error: plans/small.yaml: line ") and says in line, line
    assert f"; fix: {fix}" in line, line


@pytest.mark.parametrize(
    ("added", "says"),
    [
        (
            "negative_controls:\n  - {id: !!int 12, predicted: CONFORMS}\n",
            "negative_controls[0].id: Input should be a valid string",  # was [12]: no position
        ),
        ("held_out: [!!binary AA==]\n", "held_out: \\x00 is no target"),  # was a NUL byte
        ('held_out: ["a\\nb"]\n', "held_out: a\\nb is no target"),  # was two lines
    ],
)
def test_a_value_of_an_odd_form_is_named_as_written_on_one_line(small, capsys, added, says):
    (small / "plans" / "small.yaml").write_text(
        (small / "plans" / "small.yaml").read_text() + added
    )
    (line,) = refused(capsys, small, "plan", "check", "plans/small.yaml")
    assert line.startswith(f"error: plans/small.yaml: {says}"), line


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("seed: 7", "seed: " + "[" * 600 + "]" * 600, "file: nested too deeply to read"),
        ("timeout_seconds: 20", "timeout_seconds: 1.0e10", "timeout_seconds: Input should be"),
        ("seed: 7", "seed: 7\nmemory_limit_mb: 2199023255552", "memory_limit_mb: Input should be"),
    ],
)
def test_a_plan_no_worker_could_run_is_refused(small, capsys, old, new, says):
    """Past these bounds the OS refuses the worker's limits, and every pair was a crash."""
    _edit(small, old, new)
    (line,) = refused(capsys, small, "plan", "check", "plans/small.yaml")
    assert says in line, line


@pytest.mark.parametrize(
    ("command", "in_the_way"),
    [
        ("draw", "mutants/small"),
        ("run", "results/small"),
        ("run", "results/small/ID"),
        ("run", "results/.setup-cache"),
        ("run", "results/.setup-cache/ID"),
    ],
)
@pytest.mark.parametrize("kind", ["file", "dangling link", "link to a folder"])
def test_a_file_or_dangling_link_below_a_project_folder_is_refused(
    small, capsys, command, in_the_way, kind
):
    """The plan's or the run's folder in the way gave a traceback once the work was done."""
    assert main(["draw", "plans/small.yaml"]) == 0
    assert main(["freeze", "plans/small.yaml"]) == 0
    record = json.loads((small / "plans" / "small.freeze.json").read_text())
    path = small / in_the_way.replace("ID", record["freeze_id"])
    if command == "draw":
        (small / "plans" / "small.freeze.json").unlink()  # a frozen plan's draw is refused first
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(path, ignore_errors=True)
    if kind == "file":
        path.write_text("x")
    else:
        (small / "elsewhere").mkdir()
        path.symlink_to(small / ("elsewhere" if kind == "link to a folder" else "nowhere"))
    capsys.readouterr()
    (line,) = refused(capsys, small, command, "plans/small.yaml")
    says = {
        "file": "is a file, where a folder goes",
        "dangling link": "is a link that leads to no folder, where a folder goes",
        "link to a folder": "is a symbolic link, where a folder goes; the harness does not",
    }[kind]
    field = str(path.relative_to(small))
    assert line.startswith(f"error: {path}: {field}: {says}"), line


def test_run_post_hoc_checks_what_draw_checks(small, capsys):
    assert main(["draw", "plans/small.yaml"]) == 0
    assert main(["freeze", "plans/small.yaml"]) == 0
    plan = small / "plans" / "small.yaml"
    drawn = plan.read_text()
    plan.write_text(drawn + "negative_controls:\n  - {id: NC-nope, predicted: CONFORMS}\n")
    capsys.readouterr()
    (line,) = refused(capsys, small, "run", "plans/small.yaml", "--post-hoc", "--workers", "1")
    assert "NC-nope" in line and "not found" in line, line
    plan.write_text(
        drawn + "predictions:\n  undecidable: error\n  recall_floor: {M-PHANTOM: 0.99}\n"
    )
    lines = refused(capsys, small, "run", "plans/small.yaml", "--post-hoc", "--workers", "1")
    assert all("can never hold" in line for line in lines), lines


def test_run_post_hoc_checks_a_controls_predicted_verdict_as_draw_does(small, capsys):
    _with_control(small)
    plan = small / "plans" / "small.yaml"
    assert main(["draw", "plans/small.yaml"]) == 0
    assert main(["freeze", "plans/small.yaml"]) == 0
    plan.write_text(plan.read_text().replace("predicted: CONFORMS", "predicted: VIOLATES"))
    capsys.readouterr()
    # a run that does not waive the freeze hears the freeze's refusal, naming the edited plan
    lines = refused(capsys, small, "run", "plans/small.yaml", "--workers", "1")
    assert any(line.startswith("error: plans/small.yaml: ") for line in lines), lines
    assert not any("predicts VIOLATES" in line for line in lines), lines
    (line,) = refused(capsys, small, "run", "plans/small.yaml", "--post-hoc", "--workers", "1")
    assert "NC-int-float.yaml: predicted: the plan predicts VIOLATES" in line, line


def _with_control(small: Path) -> Path:
    (small / "controls").mkdir()
    shutil.copy(ROOT / "controls" / "NC-int-float.yaml", small / "controls")
    plan = small / "plans" / "small.yaml"
    plan.write_text(
        plan.read_text() + "negative_controls:\n  - {id: NC-int-float, predicted: CONFORMS}\n"
    )
    return small / "controls" / "NC-int-float.yaml"


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("predicted: CONFORMS", "predicted: VIOLATES", "predicted: the plan predicts CONFORMS"),
        ("[2, 2.0]", "[3, 3.0]", "control: changed since the draw"),
        ("target: toy_domain", "target: bfcl-message", "target: bfcl-message is no target"),
    ],
)
def test_freeze_refuses_a_control_changed_since_the_draw(small, capsys, old, new, says):
    """The freeze hashes the control file and a run scores the drawn pair: a control edited
    between the two would be frozen as it reads and scored as it was drawn."""
    control = _with_control(small)
    assert main(["draw", "plans/small.yaml"]) == 0
    control.write_text(control.read_text().replace(old, new))
    (line,) = refused(capsys, small, "freeze", "plans/small.yaml")
    assert line.startswith(f"error: {control}: {says}"), line
    assert not (small / "plans" / "small.freeze.json").exists()
    control.write_text(control.read_text().replace(new, old))  # as drawn: freezes
    capsys.readouterr()
    assert main(["freeze", "plans/small.yaml"]) == 0, capsys.readouterr().err


def test_a_library_freeze_refuses_a_draw_no_longer_as_drawn(small, capsys):
    """freeze() checks for itself what `harness freeze` checks first: a control or the draw
    settings changed since the draw."""
    from harness.execution.freeze import freeze
    from harness.execution.plan import load_plan

    control = _with_control(small)
    assert main(["draw", "plans/small.yaml"]) == 0
    plan = small / "plans" / "small.yaml"
    for edited, old, new, field in (
        (control, "[2, 2.0]", "[3, 3.0]", "control"),
        (plan, "seed: 7", "seed: 8", "draw settings"),
    ):
        edited.write_text(edited.read_text().replace(old, new))
        with pytest.raises(UserError) as refusal:
            freeze(plan, load_plan(plan), small, [])
        assert [(p.file, p.where) for p in refusal.value.problems] == [(str(edited), field)]
        edited.write_text(edited.read_text().replace(new, old))
    assert not (small / "plans" / "small.freeze.json").exists()
    assert freeze(plan, load_plan(plan), small, []).freeze_id


def test_a_library_freeze_calls_its_check_on_the_draw_as_drawn_and_writes_nothing_it_refuses(
    small, capsys
):
    """freeze()'s `check` (what `harness freeze` passes: the predictions' decidability)
    sees the corpus only once the draw is found as drawn, and its refusal writes no record."""
    from harness.execution.freeze import freeze
    from harness.execution.plan import load_plan

    assert main(["draw", "plans/small.yaml"]) == 0
    plan = small / "plans" / "small.yaml"
    seen: list[int] = []

    def refuse(corpus) -> None:
        seen.append(len(corpus.pairs))
        raise UserError(Problem(str(plan), "predictions", "undecidable", "fix it"))

    plan.write_text(plan.read_text().replace("seed: 7", "seed: 8"))
    with pytest.raises(UserError) as refusal:
        freeze(plan, load_plan(plan), small, [], check=refuse)
    assert [p.where for p in refusal.value.problems] == ["draw settings"]
    assert seen == []  # not as drawn: refused before the check
    plan.write_text(plan.read_text().replace("seed: 8", "seed: 7"))
    with pytest.raises(UserError) as refusal:
        freeze(plan, load_plan(plan), small, [], check=refuse)
    assert [p.where for p in refusal.value.problems] == ["predictions"]
    assert len(seen) == 1 and seen[0] > 0
    assert not (small / "plans" / "small.freeze.json").exists()


def test_a_library_draw_refuses_a_frozen_plan_unless_refreezing(small, capsys):
    """draw() itself refuses what `harness draw` refused alone: a frozen plan's sample
    redrawn; with `refreeze` it draws from the pairs no freeze used."""
    from harness.execution.draw import draw
    from harness.execution.plan import load_plan

    assert main(["draw", "plans/small.yaml"]) == 0
    assert main(["freeze", "plans/small.yaml"]) == 0
    plan = load_plan(small / "plans" / "small.yaml")
    before = listing(small)
    with pytest.raises(UserError) as refusal:
        draw(plan, small)
    assert [(p.where, p.message[:20]) for p in refusal.value.problems] == [
        ("freeze", "the plan is frozen (")
    ]
    assert listing(small) == before
    record = json.loads((small / "plans" / "small.freeze.json").read_text())
    again = draw(plan, small, refreeze=True)
    assert again.pairs and not {p.pair_id for p in again.pairs} & set(record["used_pairs"])


def test_draw_refuses_a_control_whose_target_the_plan_lacks(small, capsys):
    """A run's workers load only the plan's targets: such a control crashed every run."""
    control = _with_control(small)
    control.write_text(control.read_text().replace("target: toy_domain", "target: bfcl-message"))
    (line,) = refused(capsys, small, "draw", "plans/small.yaml")
    assert line.startswith(f"error: {control}: target: bfcl-message is no target"), line


def test_post_hoc_run_says_a_file_in_results_place_first(small, capsys):
    (small / "results").write_text("x")
    _edit(
        small,
        "seed: 7",
        "seed: 7\npredictions:\n  same_as: [{run: results/reference/small/x, scopes: [toy]}]",
    )
    (line,) = refused(capsys, small, "run", "plans/small.yaml", "--post-hoc", "--workers", "1")
    assert line.startswith(f"error: {small / 'results'}: results: is a file,"), line


def test_draw_names_the_plan_path_as_given(small, capsys, monkeypatch):
    _edit(small, "seed: 7", "seed: 7\nchecker: nonexistent")
    monkeypatch.chdir(small.parent)
    given = f"{small.name}/plans/small.yaml"
    (line,) = refused(capsys, small.parent, "draw", given)
    assert line.startswith(f"error: {given}: checker: unknown checker"), line


@pytest.mark.parametrize(
    ("run", "scopes", "says"),
    [
        ("results/reference/x/y", "[real]", "'real' is no scope of the plan's closed-world pairs"),
        (str(PUBLISHED), "[toy]", "is an absolute path"),
        ("../elsewhere", "[toy]", "lies outside the project root"),
        ("results/x/../../../elsewhere", "[toy]", "lies outside the project root"),
        ("results/reference/x/y", "[pooled, pooled]", "'pooled' is listed twice"),
    ],
)
def test_a_compared_run_must_be_the_projects_and_its_scopes_the_plans(
    small, capsys, run, scopes, says
):
    plan = small / "plans" / "small.yaml"
    plan.write_text(
        plan.read_text() + f"predictions:\n  better_than:\n    - {{run: {run}, scopes: {scopes}}}\n"
    )
    lines = refused(capsys, small, "draw", "plans/small.yaml")
    assert any(says in line for line in lines), lines


def test_a_compared_run_under_a_linked_results_folder_is_the_projects(small, tmp_path_factory):
    """results/ linked to another disk (a cluster's scratch space) is still the project's."""
    from harness.execution.plan import load_plan

    disk = tmp_path_factory.mktemp("disk")
    (disk / "reference" / "small" / "abc").mkdir(parents=True)
    (disk / "reference" / "small" / "abc" / "ledger.jsonl").write_text("")
    (small / "results").symlink_to(disk)
    plan = small / "plans" / "small.yaml"
    plan.write_text(
        plan.read_text() + "predictions:\n  same_as:\n    - {run: results/reference/small/abc}\n"
    )
    assert load_plan(plan).predictions.same_as[0].run == "results/reference/small/abc"


def test_a_yaml_merge_that_overrides_a_merged_key_is_no_key_written_twice(small):
    """An anchored mapping that merges another, merged in turn deeper in the file: building
    the outer merge rewrites the anchored mapping's keys in place (PyYAML), which a check
    made while building saw as a key written twice."""
    from harness.contracts.loader import read_yaml

    path = small / "merge.yaml"
    path.write_text(
        "base: &B {timeout: 1}\nx:\n  a: &A\n    <<: *B\n    timeout: 2\ny:\n  <<: *A\n"
    )
    assert read_yaml(path) == {
        "base": {"timeout": 1},
        "x": {"a": {"timeout": 2}},
        "y": {"timeout": 2},
    }
    path.write_text("l:\n  - {a: 1}\n  - {b: 1, c: 2, b: 3}\n")
    with pytest.raises(UserError) as caught:
        read_yaml(path)
    (problem,) = caught.value.problems
    assert (problem.where, problem.message) == ("line 3", "key 'b' written twice (first on line 3)")


def test_yaml_nested_past_the_c_stack_is_one_line(small):
    """libyaml's composer recursed on the C stack: 50,000 levels (100 kB) killed the process
    with no word (exit -11). Run as the user does: a crash here would take the test along."""
    from test_runner import harness

    _edit(small, "seed: 7", "seed: " + "[" * 50_000 + "]" * 50_000)
    done = harness("plan", "check", "plans/small.yaml", cwd=small)
    assert done.returncode == USER_ERROR_EXIT, (done.returncode, done.stderr[-300:])
    assert done.stderr.strip() == (
        "error: plans/small.yaml: file: nested too deeply to read; fix: flatten the YAML"
    )


@pytest.mark.parametrize("value", ["2024-05-15", ".inf", ".nan", "!!binary /w=="])
def test_a_control_value_a_drawn_corpus_cannot_keep_is_refused_at_draw(small, capsys, value):
    """A run scores the drawn pair: an unquoted date was drawn as a string and `.inf` as
    null, and then could never be frozen (always "changed since the draw"); bytes that are
    not UTF-8 were a traceback at the draw's write."""
    control = _with_control(small)
    control.write_text(control.read_text().replace("[2, 2.0]", f"[2, 2.0, {value}]"))
    (line,) = refused(capsys, small, "draw", "plans/small.yaml")
    assert line.startswith(
        f"error: {control}: contract_patch: holds a value a drawn corpus cannot keep"
    ), line
    control.write_text(control.read_text().replace(f", {value}]", f", '{value}']"))  # quoted
    assert main(["draw", "plans/small.yaml"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["freeze", "plans/small.yaml"]) == 0, capsys.readouterr().err


def test_a_contracts_form_error_names_the_schema_command_that_exists(tmp_path, capsys):
    contract = tmp_path / "deposit.yaml"
    text = (ROOT / "toy_domain" / "contracts" / "deposit.yaml").read_text()
    contract.write_text(text.replace("tool: deposit", "tool: [1]", 1))
    assert main(["contracts", "validate", str(contract)]) == USER_ERROR_EXIT
    line = capsys.readouterr().err.splitlines()[0]  # validate's report: the problem, a count
    assert line == (
        f"{contract}: tool: Input should be a valid string; fix: write a string "
        "(`harness contracts schema` shows the field's form)"
    ), line


def test_a_freeze_record_that_is_a_folder_is_not_mended_by_freezing_again(small, capsys):
    assert main(["draw", "plans/small.yaml"]) == 0
    (small / "plans" / "small.freeze.json").mkdir()
    for command in ("freeze", "run"):
        (line,) = refused(capsys, small, command, "plans/small.yaml")
        assert line == (
            f"error: {small / 'plans' / 'small.freeze.json'}: file: is not a file, where the "
            "freeze record goes; fix: move it away"
        ), line


def test_valid_yaml_with_many_nesting_marks_reads_as_libyaml_reads_it(small, capsys):
    """Past the bound on nesting marks the depth is measured, and the YAML still read by
    libyaml: the pure-Python parser refuses a tab after a value, which libyaml and YAML
    allow (a review found a plan with a long `#----` rule refused so)."""
    from harness.execution.plan import load_plan

    _edit(small, "seed: 7", "seed: 8\t")
    plan = small / "plans" / "small.yaml"
    plan.write_text(plan.read_text() + "#" + "-" * 2_001 + "\n")
    assert load_plan(plan).seed == 8

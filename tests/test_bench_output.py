"""The bench scripts' output names: a second sitting on the same day never replaces the first
one's files unasked (`--label` keeps both, `--replace` overwrites), and the refusal comes
before any work, as a one-line error with exit code 2."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _common():
    spec = importlib.util.spec_from_file_location("bench_common", BENCH / "common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    _common().add_output_options(parser)
    return parser.parse_args(list(argv))


def test_a_free_name_is_the_plain_stem_and_a_label_ends_it(tmp_path: Path) -> None:
    common = _common()
    assert common.output_stem("overhead-2026-12-05-limit5", _args(), folder=tmp_path) == (
        tmp_path / "overhead-2026-12-05-limit5"
    )
    labelled = _args("--label", "v2.1")
    stem = common.output_stem("overhead-2026-12-05-limit5", labelled, folder=tmp_path)
    assert stem == tmp_path / "overhead-2026-12-05-limit5-v2.1"
    # the suffix is added, not put in place of ".1" (as `with_suffix` would)
    assert Path(f"{stem}.json").name == "overhead-2026-12-05-limit5-v2.1.json"


def test_an_earlier_sittings_file_is_refused_unless_labelled_or_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = _common()
    (tmp_path / "cached-pairs-2026-12-05.md").write_text("an earlier sitting\n")
    with pytest.raises(SystemExit) as stopped:
        common.output_stem("cached-pairs-2026-12-05", _args(), folder=tmp_path)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "cached-pairs-2026-12-05.md" in error
    assert "--label" in error and "--replace" in error
    assert (tmp_path / "cached-pairs-2026-12-05.md").read_text() == "an earlier sitting\n"
    labelled = common.output_stem("cached-pairs-2026-12-05", _args("--label", "b"), folder=tmp_path)
    assert labelled.name == "cached-pairs-2026-12-05-b"
    replaced = common.output_stem("cached-pairs-2026-12-05", _args("--replace"), folder=tmp_path)
    assert replaced == tmp_path / "cached-pairs-2026-12-05"
    # only the suffixes the script writes count: a .json-only script is free beside a .md
    assert common.output_stem("cached-pairs-2026-12-05", _args(), (".json",), folder=tmp_path)


@pytest.mark.parametrize("label", ["", "a b", "../x", "-x"])
def test_a_label_that_is_not_a_plain_name_is_refused(
    tmp_path: Path, label: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        _common().output_stem("trace-2026-12-05", _args(f"--label={label}"), folder=tmp_path)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.startswith("error: --label: ")
    assert list(tmp_path.iterdir()) == []


PUBLISHED = BENCH.parent / "results" / "reference" / "closed_world" / "a2b36cd357b3b4d2"


@pytest.mark.parametrize(
    ("script", "extra"),
    [
        ("overhead.py", []),
        ("cached_pairs.py", []),
        ("exhaustive.py", []),
        ("throughput.py", []),
        ("trace.py", []),
        ("bare_work.py", []),
        ("pool_time.py", [str(PUBLISHED)]),
    ],
)
def test_each_script_refuses_a_bad_label_before_any_work(script: str, extra: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *extra, "--label", "not plain"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""  # no load line, no project drawn: refused before the work
    assert done.stderr.strip().splitlines() == [
        "error: --label: 'not plain' is not a plain name; "
        "fix: use letters, digits, '.', '_' and '-' only"
    ]

"""The documentation site builds in strict mode (a broken link, anchor or nav entry fails
it), and its command reference is the parser's own help for every command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness.cli import build_parser
from harness.cli_reference import command_reference

ROOT = Path(__file__).resolve().parents[1]


def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    """Not `-q`: quiet hides warnings from strict mode, and a nav entry with no page (the
    home page was one, unnoticed, until the eleventh refreeze's sitting) then builds."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "Start here" in home and 'href="tutorial/"' in home
    page = (tmp_path / "site" / "commands" / "index.html").read_text(encoding="utf-8")
    assert "harness contracts validate" in page
    changelog = (tmp_path / "site" / "changelog" / "index.html").read_text(encoding="utf-8")
    assert "Reference checker" in changelog


def test_command_reference_covers_every_command() -> None:
    parser = build_parser()
    reference = command_reference(parser)
    names = next(
        action.choices
        for action in parser._actions
        if action.__class__.__name__ == "_SubParsersAction"
    )
    for name, sub in names.items():
        assert f"## `harness {name}`" in reference
        assert f"usage: harness {name}" in reference
        for action in sub._actions:  # every option of every command is on the page
            for flag in action.option_strings:
                assert flag in reference, (name, flag)
    # nested commands get their own section, one level down
    assert "### `harness contracts validate`" in reference

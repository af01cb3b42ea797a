"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`): the command reference is
rendered from `harness`'s own argument parser, and the changelog page is CHANGELOG.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

MARKER = "<!-- harness-command-reference -->"
CHANGELOG_MARKER = "<!-- changelog -->"
ROOT = Path(__file__).resolve().parent


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        from harness.cli import build_parser
        from harness.cli_reference import command_reference

        markdown = markdown.replace(MARKER, command_reference(build_parser()))
    if CHANGELOG_MARKER in markdown:
        text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
        markdown = markdown.replace(CHANGELOG_MARKER, text.split("\n", 1)[1])
    return markdown

"""The command reference of the documentation site, rendered from the argument parser that
`harness` itself uses, so the page cannot drift from the program (`mkdocs_hooks.py` puts it
in place of `<!-- harness-command-reference -->` in docs/commands.md)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

# argparse wraps help at the terminal's width; a fixed width makes the page the same on
# every machine
WIDTH = "100"


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            yield from dict.fromkeys(action.choices.values())  # aliases point to one parser


def _walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for child in _subcommands(parser):
        yield from _walk(child)


def command_reference(parser: argparse.ArgumentParser) -> str:
    """One section per command and subcommand: its `--help` text, verbatim."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        sections = []
        for command in _walk(parser):
            level = "#" * min(2 + command.prog.count(" "), 4)
            sections.append(f"{level} `{command.prog}`\n\n```text\n{command.format_help()}```\n")
        return "\n".join(sections)
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved

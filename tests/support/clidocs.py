"""docs/cli.md, written from every command's --help.

`python -m tests.support.clidocs` rewrites docs/cli.md; tests/test_docs.py regenerates it in
memory and fails when the committed page has drifted. The help is formatted at a fixed width
(COLUMNS) so the page does not depend on the terminal that wrote it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI_MD = ROOT / "docs" / "cli.md"
REFRESH = "python -m tests.support.clidocs"
WIDTH = "100"


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser's subcommand parsers in the order they were added, aliases once."""
    seen: set[int] = set()
    for action in parser._actions:  # argparse has no public walk over subcommands
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                if id(child) not in seen:
                    seen.add(id(child))
                    yield child


def _walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for child in _subparsers(parser):
        yield from _walk(child)


def render() -> str:
    """The whole page: the top-level help, then every command and subcommand, depth first."""
    from evalrun.cli import build_parser

    saved = {name: os.environ.get(name) for name in ("COLUMNS", "NO_COLOR")}
    os.environ["COLUMNS"] = WIDTH
    os.environ["NO_COLOR"] = "1"
    try:
        parsers = list(_walk(build_parser()))
        sections = [
            "# evalrun command reference\n",
            f"Generated from each command's `--help` by `{REFRESH}`; do not edit by hand "
            "(a unit test fails when this page and the commands disagree).\n",
        ]
        sections.append(
            "Commands: "
            + ", ".join(f"[`{p.prog}`](#{_anchor(p.prog)})" for p in parsers[1:])
            + "\n"
        )
        for p in parsers:
            sections.append(f"## {p.prog}\n\n```text\n{p.format_help().rstrip()}\n```\n")
        return "\n".join(sections)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading of plain words: lowercase, spaces to hyphens."""
    return heading.lower().replace(" ", "-")


def main() -> None:
    CLI_MD.parent.mkdir(exist_ok=True)
    CLI_MD.write_text(render(), encoding="utf-8")
    print(f"wrote {CLI_MD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

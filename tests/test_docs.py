"""The docs stay true: docs/cli.md is the commands' own --help, and ARCHITECTURE.md names every module."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import clidocs

ROOT = Path(__file__).resolve().parent.parent


def test_cli_md_matches_every_commands_help() -> None:
    committed = clidocs.CLI_MD.read_text(encoding="utf-8") if clidocs.CLI_MD.exists() else ""
    if committed != clidocs.render():
        pytest.fail(f"run `{clidocs.REFRESH}` to refresh docs/cli.md", pytrace=False)


def test_cli_md_has_every_command_and_subcommand() -> None:
    from evalrun.cli import COMMANDS

    page = clidocs.render()
    for name in COMMANDS:
        assert f"\n## evalrun {name}\n" in page
    for nested in ("suite check", "suite graders", "lane setup", "slope compare"):
        assert f"\n## evalrun {nested}\n" in page

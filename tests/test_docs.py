"""The docs stay true: docs/cli.md is the commands' own --help, and ARCHITECTURE.md names every module."""

from __future__ import annotations

import re
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


def _named_in(doc: str) -> set[str]:
    """Every word ARCHITECTURE.md sets in backticks: `name.py`, `pkg/`, `pkg/name.py`, `name`."""
    return {
        word for span in re.findall(r"`([^`]+)`", doc) for word in re.split(r"[\s,()+·:]+", span)
    }


def test_architecture_names_every_module() -> None:
    """Each module under evalrun/ appears in ARCHITECTURE.md by its file name (or its stem, or
    `package/name.py`); commands/<verb>.py is covered by the verb table, cli.COMMANDS."""
    from evalrun.cli import COMMANDS

    named = _named_in((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    missing = []
    for path in sorted((ROOT / "evalrun").rglob("*.py")):
        rel = path.relative_to(ROOT / "evalrun")
        if path.name == "__init__.py":
            if len(rel.parts) > 1 and f"{rel.parts[-2]}/" not in named:
                missing.append(f"evalrun/{rel.parent}/")
            continue
        if rel.parts[0] == "commands" and path.stem in COMMANDS:
            continue
        if (
            not {path.name, path.stem, f"{rel.parts[-2]}/{path.name}" if len(rel.parts) > 1 else ""}
            & named
        ):
            missing.append(f"evalrun/{rel}")
    assert not missing, f"ARCHITECTURE.md does not name: {', '.join(missing)}"


def test_bisect_docs_state_the_fail_on_default_the_code_has() -> None:
    from evalrun.bisection.driver import BisectRequest
    from evalrun.bisection.trial import DEFAULT_FAIL_ON
    from evalrun.cli import build_parser

    text = (ROOT / "docs" / "bisect.md").read_text(encoding="utf-8")
    stated = re.findall(r"`--fail-on ([a-z_,]+)` \(the default\)", text)
    assert stated, "docs/bisect.md no longer states the --fail-on default"
    parsed = build_parser().parse_args(["bisect", "--contract", "c.yaml"])
    code = BisectRequest.model_fields["fail_on"].default
    for default in (*stated, parsed.fail_on, code):
        assert set(default.split(",")) == DEFAULT_FAIL_ON, default

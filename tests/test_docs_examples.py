"""Every shell example in README.md and docs/*.md runs and exits as documented.

An example is a line of a ```bash block that starts with `evalrun` or pipes into it (a trailing
backslash joins the next line). It must exit with the code its comment states (`# exit 1: ...`),
else 0. A block preceded by `<!-- tier: NAME -->` is skipped: `integration` boots an engine or
needs a running endpoint, a lane or stored runs; `example` names the reader's own files or hosts.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(
    r"(?:<!-- tier: (?P<tier>[\w-]+) -->\n)?```(?:bash|sh|shell)\n(?P<body>.*?)```", re.S
)
_EXIT = re.compile(r"#\s*exit (\d+)")


def _examples() -> list[tuple[str, str, int]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in _BLOCK.finditer(text):
            if block["tier"]:
                continue
            line_no = text[: block.start("body")].count("\n") + 1
            for offset, line in enumerate(block["body"].replace("\\\n", " ").splitlines()):
                if re.match(r"evalrun\b", line) or "| evalrun " in line:
                    code = _EXIT.search(line)
                    where = f"{page.relative_to(ROOT)}:{line_no + offset}"
                    found.append((where, line, int(code.group(1)) if code else 0))
    return found


EXAMPLES = _examples()


def test_the_docs_have_runnable_examples() -> None:
    pages = {where.split(":")[0] for where, _, _ in EXAMPLES}
    assert {"README.md", "docs/garble.md", "docs/suite.md"} <= pages


@pytest.mark.slow
@pytest.mark.parametrize(("where", "line", "code"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example_runs_as_documented(where: str, line: str, code: int, tmp_path: Path) -> None:
    # `evalrun` is this interpreter's entry point; examples run from the repository's root, where
    # their paths (bisect/contracts/...) are, with results written under a temporary folder.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "evalrun"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m evalrun "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "100"}
    env.pop("OPENAI_BASE_URL", None)
    bash = shutil.which("bash") or "/bin/bash"
    done = subprocess.run(
        [bash, "-o", "pipefail", "-c", line],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == code, (
        f"{where}: `{line}` exited {done.returncode}, not {code}: {done.stderr[-500:]}"
    )

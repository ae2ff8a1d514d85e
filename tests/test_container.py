"""Booting engines in containers with a real podman (the `container` tier, -m container).

The image is built here from a tarball (tests/support/containers.py: the fake engines under
/engine, Python from this machine's /usr mounted read-only). Each test checks what a user would:
requests reach the engine in its container, run.json names the image and its digest, failures
come back classified with a hint, and afterwards `podman ps -a` lists no container of evalrun's,
after a normal end, an error, Ctrl-C, SIGTERM and kill -9 of evalrun (and of its watchdog too).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest
import yaml
from fakeserver import simple_item, write_suite
from support.containers import (
    ENGINES,
    build_image,
    build_releases,
    configure,
    containers,
    wait_no_containers,
)
from support.drive import start_drive

from evalrun.base.errors import BootError
from evalrun.serving.contract import contract_from_data
from evalrun.serving.launcher import boot_server

pytestmark = pytest.mark.container

HERE = Path(__file__).resolve().parent
SECRET = "hf_sekrit_value_123"


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("podman")
    problem = configure(folder)
    if problem:
        pytest.fail(problem)  # the tier asked for podman: a missing one is a failure, not a skip
    return build_image(folder)


@pytest.fixture(autouse=True)
def nothing_left_behind(image: str):
    """Every test starts and ends with no container of evalrun's."""
    assert wait_no_containers(5) == [], "a container from before this test"
    yield
    assert wait_no_containers() == []


def launch(image: str, **extra: object) -> dict:
    return {"kind": "container", "runtime": "podman", "image": image,
            "volumes": ["/usr:/usr:ro"], **extra}  # fmt: skip


def contract_data(image: str, script: str = "engine.py", **extra: object) -> dict:
    data = {
        "name": "fake",
        "engine": "vllm",
        "command": ["python3", f"/engine/{script}"],
        "model": "m",
        "port": 0,
        "boot_timeout": 30,
        "env": {"HF_TOKEN": SECRET},
        "launch": launch(image),
    }
    return {**data, **extra}


def chat(base_url: str, model: str) -> str:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    resp = httpx.post(f"{base_url}/chat/completions", json=body, timeout=10)
    return str(resp.json()["choices"][0]["message"]["content"])


def label(name: str, key: str) -> str:
    done = subprocess.run(["podman", "inspect", "--format", f'{{{{index .Config.Labels "{key}"}}}}',
                           name], capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


# A boot, a score, a bisect ---------------------------------------------------------------------


def test_boot_answers_in_the_container_and_leaves_nothing(image, tmp_path):
    contract = contract_from_data(contract_data(image, args={"print-env": "HF_TOKEN"}))
    with boot_server(contract, tmp_path / "trial-7" / "server.log") as server:
        assert chat(server.base_url, server.model) == "OK"
        assert server.launch == "container" and server.image is not None
        assert server.image["digest"].startswith("sha256:") and server.image["image"] == image
        [row] = containers()
        name = row.split()[1]
        assert label(name, "evalrun.run") == "trial-7"  # the run's (or trial's) folder
        assert label(name, "evalrun.owner").split(":")[1] == str(os.getpid())
    log = (tmp_path / "trial-7" / "server.log").read_text()
    assert "--network" not in log and f"-p 127.0.0.1:{server.port}:{server.port}" in log
    assert "--host 0.0.0.0" in log  # inside, the engine listens where the published port lands
    assert SECRET not in log and "-e HF_TOKEN " in log  # the engine printed it: scrubbed


def test_score_records_the_image_and_no_secret(image, tmp_path, capsys):
    from evalrun.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(contract_data(image, args={"print-env": "HF_TOKEN"})))
    suite = write_suite(tmp_path / "suite", [simple_item(i, answer="OK") for i in range(3)])
    argv = ["score", "--contract", str(path), "--suite", str(suite), "--results",
            str(tmp_path / "results"), "--json", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] == 3
    folder = Path(data["path"])
    record = json.loads((folder / "run.json").read_text())
    facts = record["server"]["image"]
    assert facts["image"] == image and facts["digest"].startswith("sha256:")
    assert facts["runtime"] == "podman" and facts["id"]
    assert record["contract"]["env"]["HF_TOKEN"] == "***"
    for file in folder.rglob("*"):
        if file.is_file():
            assert SECRET not in file.read_text(errors="replace"), file


def bisect_8(tmp_path: Path, image: str, lanes: int, results: str):
    from support.knob_contracts import eight_knobs
    from test_bisect_lanes import request

    from evalrun.bisection.driver import run_bisect

    folder = tmp_path / results
    folder.mkdir()
    good, bad = eight_knobs(folder, launch(image), command=["python3", "/engine/knobs.py"])
    return run_bisect(request(folder, lanes, "results", good=good, bad=bad), log=lambda _: None)


def test_bisect_over_containers_names_the_culprit_on_one_and_two_lanes(image, tmp_path):
    one = bisect_8(tmp_path, image, 1, "one")
    two = bisect_8(tmp_path, image, 2, "two")
    culprit = [{"knob": "load-format", "value": "instanttensor"}]
    assert one.culprits == two.culprits == culprit
    assert {t.lane for t in two.trials} == {1, 2}  # each lane its own container and port
    assert two.rounds < one.rounds


def test_engine_bisect_over_image_tags_names_the_first_bad_tag(image, tmp_path):
    """A container contract's build is its image: `--knob engine --values` are its tags, booted
    in order; tags 3 and 4 hold an engine that garbles every answer."""
    from support.knob_contracts import write_contract

    from evalrun.bisection.driver import BisectRequest, run_bisect

    knobs = (ENGINES / "knobs.py").read_text()
    garbling = knobs.replace('GARBLE if args.load_format == "instanttensor" else "ok"', "GARBLE")
    assert garbling != knobs
    bad = {"engine/knobs.py": garbling.encode()}
    repo = build_releases(tmp_path, {"1": {}, "2": {}, "3": bad, "4": bad})
    contract = write_contract(tmp_path, "tagged", {}, launch(f"{repo}:1"),
                              command=["python3", "/engine/knobs.py"])  # fmt: skip
    suite = write_suite(tmp_path / "suite", [simple_item(i, tags=["probe"]) for i in range(2)])
    request = BisectRequest(suite=str(suite), results=str(tmp_path / "results"), burst=2,
                            contract=contract, knob="engine", values=["1", "2", "3", "4"],
                            ordered=True)  # fmt: skip
    record = run_bisect(request, log=lambda _: None)
    assert record.ordered is not None, record.verdict
    assert (record.ordered.first_bad, record.ordered.last_good) == (f"{repo}:3", f"{repo}:2")
    assert record.boots <= 4 and record.exit_code == 0, record.verdict


# Boot failures, classified ------------------------------------------------------------------------


def boot_fails(tmp_path: Path, data: dict) -> BootError:
    with pytest.raises(BootError) as err:
        with boot_server(contract_from_data(data), tmp_path / "server.log"):
            pass
    return err.value


def test_missing_image(image, tmp_path):
    err = boot_fails(tmp_path, contract_data("localhost/evalrun-no-such-image:1"))
    assert err.kind == "image_not_found"
    assert "not present" in err.message and "podman load" in (err.hint or "")


@pytest.mark.parametrize("runtime", ["/nonexistent/podman", "false"])
def test_bad_runtime(image, tmp_path, runtime):
    data = contract_data(image)
    data["launch"]["runtime"] = runtime
    err = boot_fails(tmp_path, data)
    assert err.kind == ("runtime_missing" if "/" in runtime else "runtime_broken")
    assert err.hint


def test_engine_dying_during_boot_is_classified_from_its_log(image, tmp_path):
    err = boot_fails(tmp_path, contract_data(image, args={"mode": "crash", "message": "oom"}))
    assert err.kind == "oom" and "during boot" in err.message  # the engine's own words


def test_command_missing_from_the_image(image, tmp_path):
    err = boot_fails(tmp_path, {**contract_data(image), "command": ["/opt/no/vllm"]})
    assert err.kind == "executable_not_found" and "/opt/no/vllm" in err.message


def test_container_killed_for_memory(image, tmp_path, monkeypatch):
    # podman's conmon leaves an empty file `oom` in the working directory when the kernel kills
    # the container for memory: the test runs in its own folder, not the checkout
    monkeypatch.chdir(tmp_path)
    data = {**contract_data(image), "command": ["python3", "-c",
            "print('allocating'); x = bytearray(512 << 20)"]}  # fmt: skip
    data["launch"]["options"] = ["--memory=48m", "--memory-swap=48m"]
    err = boot_fails(tmp_path, data)
    assert err.kind == "oom_killed" and "--memory" in (err.hint or "")


def test_port_in_use(image, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        err = boot_fails(tmp_path, contract_data(image, port=sock.getsockname()[1]))
    assert err.kind == "port_in_use"


def test_runtime_refusing_the_run_is_classified(image, tmp_path):
    data = contract_data(image)
    data["launch"]["options"] = ["--no-such-option"]
    err = boot_fails(tmp_path, data)
    assert err.kind == "container_failed" and "podman run" in err.message


# Nothing left running: Ctrl-C, SIGTERM, kill -9 -------------------------------------------------


@pytest.mark.parametrize("how", ["sigint", "sigterm", "kill9"])
def test_interrupted_evalrun_leaves_no_container(image, tmp_path, how):
    # an engine that ignores SIGTERM: a stop must end in SIGKILL after stop_timeout
    data = contract_data(image, args={"ignore-term": True})
    data["launch"]["stop_timeout"] = 2
    proc = start_drive(tmp_path, data)
    assert len(containers()) == 1
    sig = {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM, "kill9": signal.SIGKILL}[how]
    proc.send_signal(sig)
    proc.wait(timeout=60)
    assert proc.stdout is not None
    proc.stdout.close()
    # kill -9: evalrun cannot clean up; its watchdog sees its parent gone and removes the container
    assert wait_no_containers() == []


def watchdogs(name: str) -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
            and name.encode() in (p / "cmdline").read_bytes()
            and b"select" in (p / "cmdline").read_bytes()]  # fmt: skip


def test_kill9_of_evalrun_and_its_watchdog_is_swept_at_the_next_boot(image, tmp_path):
    proc = start_drive(tmp_path, contract_data(image))
    [row] = containers()
    name = row.split()[1]
    for pid in watchdogs(name):
        os.kill(pid, signal.SIGKILL)
    proc.kill()
    proc.wait(timeout=30)
    assert proc.stdout is not None
    proc.stdout.close()
    time.sleep(1)
    assert [r.split()[1] for r in containers()] == [name]  # nobody left to remove it
    with boot_server(contract_from_data(contract_data(image)), tmp_path / "next.log"):
        assert name not in " ".join(containers())  # the next boot removed the orphan
    assert "removed 1 stale container" in (tmp_path / "next.log").read_text()


@pytest.mark.parametrize("how", ["sigint", "kill9"])
def test_interrupted_bisect_over_two_container_lanes_leaves_nothing(image, tmp_path, how):
    from support.knob_contracts import write_contract

    command = ["python3", "/engine/knobs.py"]
    args = {"boot-delay": 30, "load-format": "safetensors"}
    good = write_contract(tmp_path, "good", args, launch(image), command=command)
    bad = write_contract(tmp_path, "bad", {**args, "load-format": "instanttensor", "knob-1": "on"},
                         launch(image), command=command)  # fmt: skip
    suite = write_suite(tmp_path / "suite", [simple_item(i, tags=["probe"]) for i in range(2)])
    argv = [sys.executable, "-m", "evalrun", "bisect", "--good", good, "--bad", bad, "--suite",
            str(suite), "--burst", "2", "--results", str(tmp_path / "results"), "--lanes", "2"]  # fmt: skip
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not containers():  # a trial in flight on a lane's thread
            assert proc.poll() is None and time.monotonic() < deadline, containers()
            time.sleep(0.3)
        proc.send_signal(signal.SIGINT if how == "sigint" else signal.SIGKILL)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if how == "sigint":
        assert proc.returncode == 130, err
    assert wait_no_containers() == []


# A lane kept as a compose file -------------------------------------------------------------------


def test_a_compose_service_boots_like_a_container_block(image, tmp_path, monkeypatch):
    monkeypatch.setenv("LANE_TOKEN", SECRET)
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump({"services": {"engine": {
        "image": image, "volumes": ["/usr:/usr:ro"], "environment": {"HF_TOKEN": "${LANE_TOKEN}"},
        "ports": ["8000:8000"], "restart": "always", "labels": {"team": "serving"}}}}))  # fmt: skip
    data = contract_data(image, args={"print-env": "HF_TOKEN"})
    data.pop("env")
    data["launch"] = {"kind": "compose", "file": str(tmp_path / "compose.yaml"),
                      "service": "engine", "runtime": "podman"}  # fmt: skip
    with boot_server(contract_from_data(data), tmp_path / "server.log") as server:
        assert chat(server.base_url, server.model) == "OK"
        assert server.image is not None and server.image["image"] == image
        [row] = containers()
        assert label(row.split()[1], "team") == "serving"
    log = (tmp_path / "server.log").read_text()
    assert "ENV HF_TOKEN=***" in log  # the service's environment reached the engine, and its
    assert SECRET not in log and "-e HF_TOKEN " in log  # secret-looking values are scrubbed

"""Booting through a real sshd and a real single-node Slurm (the `remote` tier, -m remote).

Each test boots the flag-driven fake engine (tests/fake_engines/knobs.py, copied under a unique
name so `ps` can find it), and checks what a user would: requests reach it, failures come back
classified with a hint, and afterwards no engine, wrapper or job is left (ps / squeue), after a
normal end, Ctrl-C, SIGTERM, kill -9 of evalrun and a lost ssh connection.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest
import yaml
from support.drive import start_drive

from evalrun.base.errors import BootError
from evalrun.serving.contract import contract_from_data
from evalrun.serving.launcher import boot_server

pytestmark = pytest.mark.remote

HERE = Path(__file__).resolve().parent


def engine_copy(tmp_path: Path) -> Path:
    """The knobs engine under a name unique to this test (what `ps` looks for afterwards), with
    the engine.py it imports beside it."""
    path = tmp_path / f"engine_{os.getpid()}_{time.monotonic_ns()}.py"
    shutil.copy(HERE / "fake_engines" / "knobs.py", path)
    shutil.copy(HERE / "fake_engines" / "engine.py", tmp_path / "engine.py")
    return path


def contract_data(engine: Path, launch: dict, **extra: object) -> dict:
    return {
        "name": "knobs",
        "engine": "other",
        "command": [sys.executable, str(engine)],
        "model": "m",
        "port": 0,
        "health": "/v1/models",
        "boot_timeout": 30,
        "launch": launch,
        **extra,
    }


def running(marker: str) -> list[str]:
    """Command lines of live (non-zombie) processes that mention `marker`."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and state != "Z":
            out.append(f"{proc.name}: {cmd[:120]}")
    return out


def wait_gone(marker: str, timeout: float = 30.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := running(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def wait_no_jobs(cluster: object, timeout: float = 30.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while (jobs := cluster.jobs()) and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.2)
    return jobs


def chat(base_url: str, model: str) -> str:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    resp = httpx.post(f"{base_url}/chat/completions", json=body, timeout=10)
    return str(resp.json()["choices"][0]["message"]["content"])


# ssh ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("forward", [True, False])
def test_ssh_boot_answers_and_leaves_nothing(sshd, tmp_path, forward):
    engine = engine_copy(tmp_path)
    contract = contract_from_data(contract_data(engine, sshd.launch(forward=forward)))
    with boot_server(contract, tmp_path / "server.log") as server:
        assert running(engine.name), "the engine runs (on the ssh host, here 127.0.0.1)"
        assert chat(server.base_url, server.model) == "ok"
        assert server.launch == "ssh" and server.pid > 0
        if forward:  # reached through the local end of `ssh -L`, not the engine's own port
            mark = (tmp_path / "server.log").read_text()
            assert f"port={server.port} " not in mark
    assert wait_gone(engine.name) == []
    assert wait_gone("EVALRUN-REMOTE") == []  # the wrapper is gone too


def test_ssh_refused_key_is_a_classified_boot_failure(sshd, tmp_path):
    engine = engine_copy(tmp_path)
    contract = contract_from_data(contract_data(engine, sshd.launch(key=sshd.other_key)))
    with pytest.raises(BootError) as err:
        with boot_server(contract, tmp_path / "server.log"):
            pass
    assert err.value.kind == "ssh_auth"
    assert "Permission denied" in err.value.message
    assert "authorized_keys" in (err.value.hint or "")
    assert running(engine.name) == []


def test_ssh_engine_crash_is_classified_from_its_log(sshd, tmp_path):
    data = contract_data(Path("/nonexistent/engine.py"), sshd.launch())
    data["command"] = [sys.executable, "-c", "import sys; print('CUDA out of memory'); sys.exit(3)"]
    with pytest.raises(BootError) as err:
        with boot_server(contract_from_data(data), tmp_path / "server.log"):
            pass
    assert err.value.kind == "oom"
    assert "code 3" in err.value.message


# Slurm --------------------------------------------------------------------------------------------


def test_slurm_boot_answers_and_leaves_nothing(slurm, tmp_path):
    engine = engine_copy(tmp_path)
    contract = contract_from_data(
        contract_data(engine, {"kind": "slurm", "partition": "debug", "time": "5"})
    )
    with boot_server(contract, tmp_path / "server.log") as server:
        assert chat(server.base_url, server.model) == "ok"
        assert any("RUNNING" in job for job in slurm.jobs())
        assert server.launch == "slurm" and server.host == "127.0.0.1"
    assert wait_no_jobs(slurm) == []
    assert wait_gone(engine.name) == []
    assert not (tmp_path / "server.launch.json").exists()  # the settings (env) are removed


def test_slurm_bad_partition_is_rejected_with_a_hint(slurm, tmp_path):
    engine = engine_copy(tmp_path)
    contract = contract_from_data(contract_data(engine, {"kind": "slurm", "partition": "nope"}))
    with pytest.raises(BootError) as err:
        with boot_server(contract, tmp_path / "server.log"):
            pass
    assert err.value.kind == "slurm_rejected"
    assert "partition" in err.value.message and "sinfo" in (err.value.hint or "")
    assert slurm.jobs() == []


def test_slurm_pending_past_boot_timeout_is_cancelled(slurm, tmp_path):
    engine = engine_copy(tmp_path)
    launch = {"kind": "slurm", "sbatch_options": ["--begin=now+1hour"]}
    contract = contract_from_data(contract_data(engine, launch, boot_timeout=3))
    with pytest.raises(BootError) as err:
        with boot_server(contract, tmp_path / "server.log"):
            pass
    assert err.value.kind == "slurm_pending"
    assert "BeginTime" in err.value.message and "boot_timeout" in (err.value.hint or "")
    assert wait_no_jobs(slurm) == []  # nothing left queued


def test_slurm_engine_crash_is_classified_from_the_job_output(slurm, tmp_path):
    data = contract_data(Path("/x"), {"kind": "slurm"})
    data["command"] = [sys.executable, "-c", "import sys; print('CUDA out of memory'); sys.exit(3)"]
    with pytest.raises(BootError) as err:
        with boot_server(contract_from_data(data), tmp_path / "server.log"):
            pass
    assert err.value.kind == "oom"
    assert wait_no_jobs(slurm) == []


# Nothing left running: Ctrl-C, SIGTERM, kill -9, a lost connection ---------------------------------


def finish(proc: subprocess.Popen[str]) -> None:
    proc.wait(timeout=30)
    assert proc.stdout is not None
    proc.stdout.close()


@pytest.mark.parametrize("how", ["sigint", "sigterm", "kill9"])
def test_ssh_interrupted_evalrun_leaves_no_engine(sshd, tmp_path, how):
    engine = engine_copy(tmp_path)
    proc = start_drive(tmp_path, contract_data(engine, sshd.launch()))
    assert running(engine.name)
    sig = {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM, "kill9": signal.SIGKILL}[how]
    proc.send_signal(sig)
    finish(proc)
    # kill -9: evalrun cannot clean up; the ssh client's stdin closes with it and the wrapper on
    # the host stops the engine (the remote hang-up)
    assert wait_gone(engine.name) == []
    assert wait_gone("EVALRUN-REMOTE") == []


def test_ssh_lost_connection_stops_the_engine(sshd, tmp_path):
    engine = engine_copy(tmp_path)
    proc = start_drive(tmp_path, contract_data(engine, sshd.launch()))
    try:
        clients = [
            int(line.split(":")[0])
            for line in running(f"-p {sshd.port}")
            if line.split(": ", 1)[1].startswith("ssh ")
        ]
        assert clients, "the ssh client runs"
        for pid in clients:  # the connection dies without a goodbye
            os.kill(pid, signal.SIGKILL)
        assert wait_gone(engine.name) == []
    finally:
        proc.kill()
        finish(proc)


@pytest.mark.parametrize("how", ["sigint", "sigterm", "kill9"])
def test_slurm_interrupted_evalrun_leaves_no_job(slurm, tmp_path, how):
    engine = engine_copy(tmp_path)
    proc = start_drive(tmp_path, contract_data(engine, {"kind": "slurm", "heartbeat": 3}))
    assert slurm.jobs()
    sig = {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM, "kill9": signal.SIGKILL}[how]
    proc.send_signal(sig)
    finish(proc)
    # kill -9: no scancel ran; the job stops itself once evalrun's heartbeat is 3 s old
    assert wait_no_jobs(slurm, timeout=40) == []
    assert wait_gone(engine.name) == []


# bisect over ssh and Slurm names the local culprit -------------------------------------------------


def bisect_8(tmp_path: Path, launch: dict | None, lanes: int, results: str):
    from support.knob_contracts import eight_knobs
    from test_bisect_lanes import request

    from evalrun.bisection.driver import run_bisect

    folder = tmp_path / results
    folder.mkdir()
    good, bad = eight_knobs(folder, launch)
    return run_bisect(request(folder, lanes, "results", good=good, bad=bad), log=lambda _: None)


def test_bisect_over_ssh_and_slurm_names_the_local_culprit(sshd, slurm, tmp_path):
    local = bisect_8(tmp_path, None, 1, "local")
    pool = sshd.launch()
    pool["host"] = ["127.0.0.1", "127.0.0.1"]  # a pool of two hosts (both this one)
    over_ssh = bisect_8(tmp_path, pool, 2, "ssh")
    in_slurm = bisect_8(tmp_path, {"kind": "slurm", "heartbeat": 5}, 2, "slurm")
    culprit = [{"knob": "load-format", "value": "instanttensor"}]
    assert local.culprits == over_ssh.culprits == in_slurm.culprits == culprit
    assert {t.lane for t in over_ssh.trials} == {1, 2}
    assert over_ssh.rounds < local.rounds
    assert wait_no_jobs(slurm) == []
    assert wait_gone("knobs.py") == [] and wait_gone("EVALRUN-REMOTE") == []


# A Slurm job that outlives its time limit ----------------------------------------------------------


def test_slurm_job_past_its_time_limit_is_classified_and_leaves_nothing(slurm, tmp_path):
    engine = engine_copy(tmp_path)
    # time "1": one minute, Slurm's smallest limit (slurmctld checks limits every ~30 s)
    data = contract_data(engine, {"kind": "slurm", "time": "1", "heartbeat": 5})
    contract = contract_from_data(data)
    with pytest.raises(BootError) as err, boot_server(contract, tmp_path / "s.log") as server:
        started = time.monotonic()
        deadline = started + 180
        while time.monotonic() < deadline:  # a trial still running when Slurm ends the job
            try:
                chat(server.base_url, server.model)
            except httpx.HTTPError:
                # Slurm cannot end the job before its one-minute limit: a failed chat before
                # then is the loaded machine, not the limit, so keep asking.
                if time.monotonic() - started > 60:
                    break
            time.sleep(2)
    # died while in use: the launcher's kind for that, Slurm's reason and hint inside it
    assert err.value.kind == "crashed", err.value.message
    assert "while in use (slurm_time_limit): Slurm job" in err.value.message
    assert "ended TIMEOUT" in err.value.message and "raise launch.time" in err.value.hint
    assert wait_no_jobs(slurm) == []
    assert wait_gone(engine.name) == []


# An interrupted bisect over ssh and Slurm, two lanes at once ------------------------------------


def start_bisect(tmp_path: Path, launch: dict) -> tuple[subprocess.Popen[str], Path]:
    """`evalrun bisect --lanes 2` of two contracts over `launch`, with slow boots so that a trial
    is in flight (in a lane's thread, the engine up) when the test signals it."""
    from fakeserver import simple_item, write_suite

    engine = engine_copy(tmp_path)
    good = contract_data(engine, launch, args={"boot-delay": 30, "load-format": "safetensors"})
    bad = contract_data(engine, launch, args={"boot-delay": 30, "load-format": "instanttensor",
                                              "knob-1": "on"})  # fmt: skip
    for name, data in (("good", good), ("bad", bad)):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({**data, "boot_timeout": 120}))
    suite = write_suite(tmp_path / "suite", [simple_item(i, tags=["probe"]) for i in range(2)])
    argv = [sys.executable, "-m", "evalrun", "bisect", "--good", str(tmp_path / "good.yaml"),
            "--bad", str(tmp_path / "bad.yaml"), "--suite", str(suite), "--burst", "2",
            "--results", str(tmp_path / "results"), "--lanes", "2"]  # fmt: skip
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    return proc, engine


@pytest.mark.parametrize("how", ["sigint", "sigterm", "kill9"])
@pytest.mark.parametrize("where", ["ssh", "slurm"])
def test_interrupted_bisect_over_two_lanes_leaves_nothing(sshd, slurm, tmp_path, where, how):
    launch = {"kind": "slurm", "heartbeat": 3} if where == "slurm" else sshd.launch()
    if where == "ssh":
        launch["host"] = ["127.0.0.1", "127.0.0.1"]
    proc, engine = start_bisect(tmp_path, launch)
    try:
        deadline = time.monotonic() + 60
        while not running(engine.name):  # a trial in flight on a lane's thread
            assert proc.poll() is None and time.monotonic() < deadline, running(engine.name)
            time.sleep(0.2)
        sig = {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM, "kill9": signal.SIGKILL}[how]
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if how != "kill9":
        assert proc.returncode == 130, err
        record = next((tmp_path / "results").glob("bisect-*/bisect.json"))
        assert "interrupted" in record.read_text() or "stopped" in record.read_text()
    # kill -9: ssh lanes stop by the remote hang-up, Slurm jobs by their 3 s heartbeat
    assert wait_no_jobs(slurm, timeout=40) == []
    assert wait_gone(engine.name) == []
    assert wait_gone("EVALRUN-REMOTE") == []

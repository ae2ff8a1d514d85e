"""boot_server against fake engines: readiness, boot failures, teardown on every exit path."""

from __future__ import annotations

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

from evalrun.base.errors import BootError
from evalrun.serving import launcher, ports, process, readiness
from evalrun.serving.contract import Contract
from evalrun.serving.launcher import boot_server
from evalrun.serving.ports import free_port, port_in_use
from evalrun.serving.target import record_for_run

pytestmark = pytest.mark.slow  # boots fake engine processes

ENGINES = Path(__file__).parent / "fake_engines"
ENGINE = ENGINES / "engine.py"


def fake(
    tmp_path: Path, *, python: str = sys.executable, boot_timeout: float = 30, **args: object
) -> Contract:
    """A contract running the fake engine on a free port."""
    return Contract(
        name="fake",
        engine="vllm",
        command=[python, str(ENGINE)],
        model="fake-model",
        port=0,
        args=dict(args),
        boot_timeout=boot_timeout,
        env={"FAKE_API_KEY": "s3cret"},
    )


def alive(pid: int) -> bool:
    """Running (zombies, which hold nothing, count as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def pids_of(pidfile: Path) -> list[int]:
    return [int(p) for p in pidfile.read_text().split()]


def test_boot_ok_records_and_tears_down(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    c = fake(tmp_path, pidfile=str(pidfile), **{"spawn-child": True})
    log = tmp_path / "run" / "server.log"
    with boot_server(c, log) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.model == "fake-model" and server.engine_version == "0.0.fake"
        assert server.boot_seconds > 0
        reply = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"model": server.model, "messages": [{"role": "user", "content": "hi"}]},
        ).json()
        assert reply["choices"][0]["message"]["content"] == "OK"
        contract_doc, server_doc = record_for_run(c, server)
        pids = pids_of(pidfile)
        assert all(alive(p) for p in pids)
    assert contract_doc["argv"][2:4] == ["fake-model", "--host"]
    assert contract_doc["env"] == {"FAKE_API_KEY": "***"} and len(contract_doc["hash"]) == 64
    assert server_doc["engine_version"] == "0.0.fake" and server_doc["boot_seconds"] > 0
    text = log.read_text()
    assert "# evalrun boot fake" in text and "fake engine starting" in text
    assert not any(alive(p) for p in pids), "the engine or its child survived teardown"
    assert not port_in_use("127.0.0.1", server.port)


def test_env_and_path_prepend_reach_the_server(tmp_path: Path) -> None:
    c = fake(tmp_path, **{"print-env": "FAKE_API_KEY"}).model_copy(
        update={"path_prepend": [str(tmp_path)]}
    )
    log = tmp_path / "server.log"
    with boot_server(c, log):
        pass
    text = log.read_text()
    # the engine saw the value (else it prints None); the log keeps it scrubbed, header included
    assert "ENV FAKE_API_KEY=***" in text and f"PATH0 {tmp_path}" in text
    assert "s3cret" not in text


def test_slow_boot_waits_and_reports_progress(tmp_path: Path) -> None:
    seen: list[tuple[float, str]] = []
    c = fake(tmp_path, **{"boot-delay": 1.5})
    with boot_server(
        c, tmp_path / "server.log", on_progress=lambda s, p: seen.append((s, p)), poll_interval=0.1
    ) as server:
        assert server.boot_seconds >= 1.5
    assert "loading" in {p for _, p in seen} and seen[-1][0] > 1.0


def _venv_with_ninja(tmp_path: Path) -> Path:
    """A fake venv: bin/python (symlink to this interpreter) and bin/ninja, bin not on PATH."""
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    (venv_bin / "ninja").write_text("#!/bin/sh\n")
    (venv_bin / "ninja").chmod(0o755)
    return venv_bin


@pytest.mark.parametrize(
    ("message", "kind", "in_hint"),
    [
        ("ninja", "executable_not_found", "path_prepend"),
        ("import", "import_error", "vllm_flash_attn"),
        ("oom", "oom", "ctx-size"),
        ("validator", "validator_refusal", "--unset"),
        ("port", "port_in_use", "--set port="),
        ("something odd happened", "crashed", "server.log"),
    ],
)
def test_crash_at_boot_is_classified_at_once(
    tmp_path: Path, message: str, kind: str, in_hint: str
) -> None:
    venv_bin = _venv_with_ninja(tmp_path)
    c = fake(
        tmp_path, python=str(venv_bin / "python"), boot_timeout=300, mode="crash", message=message
    )
    start = time.monotonic()
    with pytest.raises(BootError) as err, boot_server(c, tmp_path / "server.log"):
        pytest.fail("must not boot")
    assert time.monotonic() - start < 60, "an early exit must not wait for boot_timeout"
    exc = err.value
    assert exc.kind == kind, str(exc)
    assert in_hint in (exc.hint or "")
    assert "exited with code 1 during boot" in exc.message and "\n" not in str(exc)
    if kind == "executable_not_found":
        assert str(venv_bin) in exc.hint  # names the dir to prepend
        assert "'ninja'" in exc.message


def test_unrecognized_flag_is_invalid_flag(tmp_path: Path) -> None:
    c = fake(tmp_path, **{"no-such-flag": 3})
    with pytest.raises(BootError) as err, boot_server(c, tmp_path / "server.log"):
        pass
    assert err.value.kind == "invalid_flag"
    assert (
        "--unset no-such-flag" in err.value.hint and "unrecognized arguments" in err.value.message
    )


def test_missing_executable(tmp_path: Path) -> None:
    c = fake(tmp_path).model_copy(update={"command": ["no-such-engine-xyz", "serve"]})
    with pytest.raises(BootError) as err, boot_server(c, tmp_path / "server.log"):
        pass
    assert err.value.kind == "executable_not_found" and "no-such-engine-xyz" in err.value.message


def test_boot_timeout(tmp_path: Path) -> None:
    c = fake(tmp_path, boot_timeout=1.0, mode="hang")
    with (
        pytest.raises(BootError) as err,
        boot_server(c, tmp_path / "server.log", poll_interval=0.1),
    ):
        pass
    assert err.value.kind == "timeout" and "boot_timeout" in err.value.hint


def test_crash_loop(tmp_path: Path) -> None:
    c = fake(tmp_path, mode="crashloop")
    with (
        pytest.raises(BootError) as err,
        boot_server(c, tmp_path / "server.log", poll_interval=0.1),
    ):
        pass
    assert err.value.kind == "crash_loop"


def test_healthy_but_refusing_chat(tmp_path: Path) -> None:
    c = fake(tmp_path, **{"refuse-chat": True})
    with (
        pytest.raises(BootError) as err,
        boot_server(c, tmp_path / "server.log", poll_interval=0.05),
    ):
        pass
    assert err.value.kind == "chat_refused" and "served_model_name" in err.value.hint
    assert "HTTP 400" in err.value.message and "enable-auto-tool-choice" in err.value.message


def test_crash_mid_run_is_reported_and_cleaned_up(tmp_path: Path) -> None:
    c = fake(tmp_path, **{"die-after": 1})  # the readiness probe is request 1
    with pytest.raises(BootError) as err, boot_server(c, tmp_path / "server.log") as server:
        with pytest.raises(httpx.HTTPError):
            httpx.post(
                f"{server.base_url}/chat/completions", json={"model": server.model, "messages": []}
            )
        time.sleep(0.3)
    assert err.value.kind == "crashed"
    assert "after boot" in err.value.message and "Segmentation fault" in err.value.message
    assert not port_in_use("127.0.0.1", server.port)


def test_caller_error_after_server_death_explains_the_death(tmp_path: Path) -> None:
    c = fake(tmp_path, **{"die-after": 1})
    with pytest.raises(BootError) as err, boot_server(c, tmp_path / "server.log") as server:
        try:
            httpx.post(
                f"{server.base_url}/chat/completions", json={"model": server.model, "messages": []}
            )
        except httpx.HTTPError as exc:
            raise RuntimeError("the runner gave up") from exc
    assert err.value.kind == "crashed" and isinstance(err.value.__cause__, RuntimeError)


def test_port_busy_is_a_clear_error_before_boot(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        c = fake(tmp_path).model_copy(update={"port": port})
        with pytest.raises(BootError) as err, boot_server(c, tmp_path / "server.log"):
            pass
    assert err.value.kind == "port_in_use"
    assert f"port {port} on 127.0.0.1 is already in use by pid {os.getpid()}" in err.value.message
    assert not (tmp_path / "server.log").exists()  # nothing was started


def test_error_in_body_still_tears_down(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    c = fake(tmp_path, pidfile=str(pidfile), **{"spawn-child": True})
    with pytest.raises(ValueError, match="boom"), boot_server(c, tmp_path / "server.log"):
        raise ValueError("boom")
    assert not any(alive(p) for p in pids_of(pidfile))


def test_sigterm_ignoring_server_gets_killed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(process, "TERM_GRACE_S", 0.5)
    pidfile = tmp_path / "pids"
    c = fake(tmp_path, pidfile=str(pidfile), **{"ignore-term": True, "spawn-child": True})
    with boot_server(c, tmp_path / "server.log") as server:
        pass
    assert not any(alive(p) for p in pids_of(pidfile))
    assert not port_in_use("127.0.0.1", server.port)


def contract_file(tmp_path: Path, port: int, **args: object) -> Path:
    path = tmp_path / "fake.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "fake",
                "engine": "vllm",
                "command": [sys.executable, str(ENGINE)],
                "model": "fake-model",
                "port": port,
                "boot_timeout": 30,
                "args": dict(args),
            }
        )
    )
    return path


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_no_process_left_after_ctrl_c_or_sigterm(tmp_path: Path, sig: int) -> None:
    pidfile = tmp_path / "pids"
    port = free_port()
    contract = contract_file(tmp_path, port, pidfile=str(pidfile), **{"spawn-child": True})
    with subprocess.Popen(
        [sys.executable, str(ENGINES / "drive.py"), str(contract), str(tmp_path / "server.log")],
        stdout=subprocess.PIPE,
        text=True,
    ) as driver:
        try:
            assert driver.stdout is not None
            assert driver.stdout.readline().strip() == f"READY {port}"
            pids = pids_of(pidfile)
            assert all(alive(p) for p in pids)
            driver.send_signal(sig)
            assert driver.wait(timeout=30) == 130
            assert "INTERRUPTED" in driver.stdout.read()
        finally:
            if driver.poll() is None:
                driver.kill()
    assert not any(alive(p) for p in pids), "orphan server process left behind"
    assert not port_in_use("127.0.0.1", port)


def test_stderr_progress_shows_a_live_timer() -> None:
    import io

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    show = launcher.stderr_progress("lane", out)
    for t, phase in [(0.1, "starting"), (0.5, "starting"), (12.2, "loading"), (13.0, "warming")]:
        show(t, phase)
    show(13.4, "ready")
    text = out.getvalue()
    assert text.count("booting lane") == 3  # once per second, not per poll
    assert "booting lane … 12s (loading)" in text and text.endswith("booted lane in 13.4s\x1b[K\n")


def test_a_reused_log_is_classified_by_this_boot_only(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("ModuleNotFoundError: No module named 'old_boot'\n")  # an earlier boot's failure
    c = fake(tmp_path, mode="crash", message="oom")
    with pytest.raises(BootError) as err, boot_server(c, log):
        pass
    assert err.value.kind == "oom"
    assert "old_boot" in log.read_text()  # appended, not overwritten


def test_the_reason_line_beats_the_bare_exception() -> None:
    from evalrun.serving.bootfail import LogWatch, classify

    watch = LogWatch(Path("/nonexistent"))
    watch.lines.extend(
        [
            "llama_init_from_model: quantized V cache requires flash_attn to be enabled",
            '    raise ValueError("Failed to create llama_context")',
            "ValueError: Failed to create llama_context",
        ]
    )
    c = Contract(name="r", engine="llama.cpp", command=["python"])
    kind, line, _ = classify(watch, 1, contract=c, env={}, argv=["python"])
    assert kind == "validator_refusal" and "requires flash_attn" in line


def test_a_few_logged_tracebacks_are_not_a_crash_loop(tmp_path: Path) -> None:
    from evalrun.serving.bootfail import LogWatch

    log = tmp_path / "server.log"
    log.write_text(
        "Traceback (most recent call last):\nImportError: optional triton kernels\n"
        "ValueError: x\nINFO loading\nValueError: x\n"
    )
    watch = LogWatch(log)
    watch.feed()
    assert not watch.crash_loop()
    with log.open("a") as fh:
        fh.write("INFO restarting worker\nValueError: x\n")
    watch.feed()
    assert watch.crash_loop() and watch.repeats() == 3


def test_a_picked_port_stays_usable_while_a_forked_child_holds_the_probe() -> None:
    # A child another lane forks while free_port's socket is open holds a copy of it until it
    # execs (os.dup stands in for that copy): the check and the engine's bind must still pass.
    probe = ports.port_probe("127.0.0.1")
    port = probe.getsockname()[1]
    copy = os.dup(probe.fileno())
    probe.close()
    engine = socket.socket()
    try:
        assert ports.busy_port("127.0.0.1", port) is None
        engine.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as http.server, uvicorn
        engine.bind(("127.0.0.1", port))
        engine.listen()
    finally:
        os.close(copy)
        engine.close()


def test_free_port_does_not_hand_one_port_to_two_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two lanes asking at once can be offered the same free port by the OS before either engine
    # binds it: a port this process handed out lately is skipped.
    offered = iter([41001, 41001, 41001, 41002])

    class Probe:
        def __init__(self, port: int) -> None:
            self.port = port

        def __enter__(self) -> Probe:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def getsockname(self) -> tuple[str, int]:
            return ("127.0.0.1", self.port)

    monkeypatch.setattr(ports, "_handed_out", {})
    monkeypatch.setattr(ports, "port_probe", lambda host="127.0.0.1": Probe(next(offered)))
    assert [ports.free_port(), ports.free_port()] == [41001, 41002]


def test_readiness_polls_stay_bounded_through_a_boot_of_many_minutes() -> None:
    # A loaded machine booted sglang for 465 s at a 0.25 s poll: poll 1,860 used to raise
    # OverflowError (1.5 ** 1860) instead of going on waiting for the boot timeout.
    assert readiness.poll_delay(1, 0.25) == pytest.approx(0.015)
    assert [readiness.poll_delay(n, 0.25) for n in (1860, 10**6)] == [0.25, 0.25]
    delays = [readiness.poll_delay(n, 0.5) for n in range(1, 40)]
    assert delays == sorted(delays) and delays[-1] == 0.5


# A remote engine that is ending: its death is waited for, not read as alive ---------------------


class EndingEngine:
    """An engine whose target lists it as ending (a Slurm job COMPLETING) for `ending_s`, then
    reports it ended; `ends` False: it stays alive and never says it is ending."""

    def __init__(self, ending_s: float, ends: bool = True) -> None:
        self.until = time.monotonic() + ending_s
        self.ends = ends
        self.returncode: int | None = None
        self.ending_calls = 0

    def poll(self) -> int | None:
        if self.ends and time.monotonic() >= self.until:
            self.returncode = 143
        return self.returncode

    def ending(self) -> bool:
        self.ending_calls += 1
        return self.ends and time.monotonic() < self.until


def test_settle_waits_while_the_target_says_the_engine_is_ending():
    engine = EndingEngine(ending_s=2.0)
    launcher._settle(engine, grace=0.0)
    assert engine.poll() == 143  # waited past the ending window, so the death is seen


def test_settle_returns_at_once_for_a_live_engine():
    engine = EndingEngine(ending_s=0.0, ends=False)
    started = time.monotonic()
    launcher._settle(engine, grace=0.0)
    assert engine.poll() is None and time.monotonic() - started < 0.5
    assert engine.ending_calls == 1

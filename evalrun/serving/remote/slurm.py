"""Boot a contract in a Slurm job (`launch: {kind: slurm, ...}`).

evalrun writes a batch script beside the trial log (the log folder must be on a filesystem the
nodes share, as results/ usually is), submits it with `sbatch --parsable`, waits while the job
is pending, learns the node from Slurm (`squeue`, `scontrol show node`'s NodeAddr) and the port
from the wrapper's line in the job's output (the trial log). A job that pends past the contract's
boot_timeout, is refused by sbatch, fails or hits its time limit is a classified boot failure
with a hint. Stopping is `scancel` and a wait until Slurm no longer lists the job, on every exit
path. If evalrun is killed with -9 the job stops itself: evalrun touches a heartbeat file every
few seconds, and the wrapper stops the engine once it is `heartbeat` seconds old.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import threading
import time
from typing import IO

from evalrun.base.errors import BootError
from evalrun.serving.remote.engine import (
    STOP_WAIT_S,
    WRAPPER_SOURCE,
    Boot,
    BootProgress,
    read_mark,
    run_quiet,
    wrapper_config,
)
from evalrun.serving.remote.spec import SlurmLaunch

ACTIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING"}
POLL_S = 1.0
SBATCH_HINTS = (
    ("partition", "check launch.partition: `sinfo -s` lists the partitions you may use"),
    ("gres", "check launch.gres against what the partition offers (`sinfo -o %G`)"),
    ("time limit", "lower launch.time to the partition's limit (`sinfo -o %l`)"),
    ("node configuration", "no node can ever satisfy this request: ask for less"),
    ("account", "add --account=NAME to launch.sbatch_options"),
)
FINAL_HINTS = {
    "TIMEOUT": ("slurm_time_limit", "raise launch.time (sbatch --time) or shorten the trial"),
    "CANCELLED": ("slurm_cancelled", "someone or something ran scancel on the job"),
    "NODE_FAIL": ("slurm_node_fail", "the node failed; run again (Slurm drains bad nodes)"),
    "OUT_OF_MEMORY": ("oom", "ask for more memory (launch.sbatch_options: [--mem=...])"),
    "PREEMPTED": ("slurm_preempted", "a higher-priority job took the node; use another QOS"),
    "BOOT_FAIL": ("slurm_node_fail", "the node did not boot; run again"),
}


def _show_job(job: str) -> dict[str, str]:
    """`scontrol show job -o` as a dict (empty once Slurm has forgotten the job)."""
    done = run_quiet(["scontrol", "show", "job", "-o", job], 15.0)
    return dict(w.split("=", 1) for w in done.stdout.split() if "=" in w)


def _node_addr(nodes: str) -> str:
    """The address of the first node of a node list (NodeAddr, else its name)."""
    names = run_quiet(["scontrol", "show", "hostnames", nodes], 15.0).stdout.split()
    first = names[0] if names else nodes
    info = run_quiet(["scontrol", "show", "node", "-o", first], 15.0).stdout
    fields = dict(w.split("=", 1) for w in info.split() if "=" in w)
    return fields.get("NodeAddr") or first


def batch_script(launch: SlurmLaunch, config: str) -> str:
    """The batch script: the wrapper's source as a here-document, its settings file as argv."""
    return (
        "#!/bin/sh\n"
        "# written by evalrun: runs the engine under evalrun's wrapper (serving/remote/wrapper.py)\n"
        f"exec {launch.python} - {shlex.quote(config)} <<'EVALRUN_WRAPPER_EOF'\n"
        f"{WRAPPER_SOURCE}\nEVALRUN_WRAPPER_EOF\n"
    )


def sbatch_argv(launch: SlurmLaunch, name: str, log: str, script: str) -> list[str]:
    argv = ["sbatch", "--parsable", f"--job-name={name}", f"--output={log}", "--open-mode=append"]
    if launch.partition:
        argv.append(f"--partition={launch.partition}")
    argv.append(f"--nodes={launch.nodes}")
    if launch.gres:
        argv.append(f"--gres={launch.gres}")
    if launch.time:
        argv.append(f"--time={launch.time}")
    return [*argv, *launch.sbatch_options, script]


class SlurmEngine:
    """A submitted job running the wrapper; the engine is alive while the job runs."""

    def __init__(self, boot: Boot, log: IO[bytes], on_progress: BootProgress | None) -> None:
        launch = boot.contract.launch
        assert isinstance(launch, SlurmLaunch)
        self.launch, self.boot = launch, boot
        base = boot.log_path.with_name(boot.log_path.stem)
        self.config = base.with_suffix(".launch.json")
        self.beat = base.with_suffix(".alive")
        self.script = base.with_suffix(".sbatch")
        log.flush()
        self._start = boot.log_path.stat().st_size
        self.beat.touch()
        fd = os.open(self.config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:  # settings carry the contract's env: owner-only
            fh.write(
                wrapper_config(
                    boot,
                    port=boot.port,
                    heartbeat=str(self.beat),
                    stale=launch.heartbeat,
                    srun=launch.srun_options or None,
                    pid_dir=str(boot.log_path.parent / "pids"),
                )
            )
        self.script.write_text(batch_script(launch, str(self.config)))
        name = f"evalrun-{boot.contract.name}"[:64]
        done = run_quiet(sbatch_argv(launch, name, str(boot.log_path), str(self.script)), 60.0)
        if done.returncode != 0:
            self._cleanup_files()
            text = " ".join(done.stderr.split()) or f"exit code {done.returncode}"
            hint = next((h for key, h in SBATCH_HINTS if key in text.lower()), None)
            raise BootError(
                f"sbatch refused the job: {text[:240]}",
                kind="slurm_rejected",
                hint=hint or "fix the launch block's Slurm options (sbatch says why above)",
            )
        self.job = done.stdout.strip().split(";")[0]
        self.state = "PENDING"
        self.final: dict[str, str] = {}
        self._alive = threading.Event()
        self._beating = threading.Thread(target=self._heartbeat, daemon=True)
        self._beating.start()
        self._last_poll = 0.0
        self._code: int | None = None
        self.host, self.port, self._pgid = "", 0, 0
        self.root = "http://127.0.0.1:0"
        try:
            self._wait_running(on_progress)
        except BaseException:
            self.stop()
            raise

    # Waiting for the node -------------------------------------------------------------------

    def _wait_running(self, on_progress: BootProgress | None) -> None:
        """Until the wrapper reports its port (or the job ends, or pends past boot_timeout)."""
        start = time.monotonic()
        timeout = self.boot.contract.boot_timeout
        reason = ""
        while True:
            elapsed = time.monotonic() - start
            info = self._squeue()
            if info is None:  # the job ended before the engine came up: the launcher reads why
                self.poll()
                return
            self.state, nodes, reason = info
            mark = read_mark(self.boot.log_path, self._start) if self.state == "RUNNING" else None
            if mark and nodes:
                self.host = _node_addr(nodes)
                self.port = int(mark["port"])
                self._pgid = int(mark["pgid"])
                self.root = f"http://{self.host}:{self.port}"
                return
            if self.state == "PENDING" and elapsed > timeout:
                raise BootError(
                    f"Slurm job {self.job} still pending after {timeout:.0f}s (reason: {reason})",
                    kind="slurm_pending",
                    hint=_pending_hint(reason, timeout),
                )
            if elapsed > timeout:
                raise BootError(
                    f"Slurm job {self.job} is {self.state} but its engine did not start in "
                    f"{timeout:.0f}s",
                    kind="timeout",
                    hint=f"see the job output in {self.boot.log_path}",
                )
            if on_progress is not None:
                on_progress(elapsed, "queued" if self.state == "PENDING" else "starting")
            time.sleep(0.25)

    def _squeue(self) -> tuple[str, str, str] | None:
        """(state, node list, reason) while Slurm lists the job as active; None once it ended."""
        done = run_quiet(["squeue", "-h", "-j", self.job, "-o", "%T|%N|%r"], 15.0)
        line = done.stdout.strip().splitlines()
        if done.returncode != 0 or not line:
            return None
        state, nodes, reason = (line[0].split("|") + ["", ""])[:3]
        return (state, nodes, reason) if state in ACTIVE else None

    def _heartbeat(self) -> None:
        period = max(0.5, min(5.0, self.launch.heartbeat / 4))
        while not self._alive.wait(period):
            with contextlib.suppress(OSError):
                os.utime(self.beat)

    # What the launcher calls -----------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The engine's process group on the node (0 until the wrapper has reported it)."""
        return self._pgid

    @property
    def returncode(self) -> int | None:
        return self._code

    def poll(self) -> int | None:
        """None while the job runs; its exit code once it ended (checked at most once a second)."""
        if self._code is not None:
            return self._code
        now = time.monotonic()
        if now - self._last_poll < POLL_S:
            return None
        self._last_poll = now
        if self._squeue() is not None:
            return None
        self.final = _show_job(self.job)
        self.state = self.final.get("JobState", "COMPLETED")
        code, _, sig = self.final.get("ExitCode", "1:0").partition(":")
        status, signum = int(code or 1), int(sig or 0)
        if status:
            self._code = status
        elif signum:
            self._code = 128 + signum
        else:
            self._code = 0 if self.state == "COMPLETED" else 1
        return self._code

    def ending(self) -> bool:
        """Whether Slurm is ending the job: COMPLETING (its processes signalled, at a time limit
        or a cancel) until its final state is recorded."""
        if self._code is not None:
            return False
        info = self._squeue()
        return info is not None and info[0] == "COMPLETING"

    def explain(self, code: int | None) -> tuple[str, str, str] | None:
        """The job's final state when it says more than the engine's log (time limit, ...)."""
        kind_hint = FINAL_HINTS.get(self.state)
        if kind_hint is None:
            return None
        kind, hint = kind_hint
        reason = self.final.get("Reason", "")
        line = f"Slurm job {self.job} ended {self.state}" + (f" ({reason})" if reason else "")
        return kind, line, hint

    def stop(self) -> str | None:
        """scancel, then wait until Slurm no longer lists the job; a problem line or None."""
        self._alive.set()
        run_quiet(["scancel", self.job], 30.0)
        deadline = time.monotonic() + STOP_WAIT_S + 30.0
        while self._squeue() is not None:
            if time.monotonic() > deadline:
                return (
                    f"Slurm job {self.job} is still listed after scancel; run `scancel {self.job}`"
                )
            time.sleep(0.25)
        self._cleanup_files()
        return None

    def _cleanup_files(self) -> None:
        for path in (self.config, self.beat):
            with contextlib.suppress(OSError):
                path.unlink()


def _pending_hint(reason: str, timeout: float) -> str:
    if "Resources" in reason or "Priority" in reason:
        return (
            "no node is free for this request: ask for fewer resources or another partition, "
            f"or raise boot_timeout (now {timeout:.0f}s) to wait for one"
        )
    if "PartitionDown" in reason or "PartitionInactive" in reason:
        return "the partition is down: pick another (launch.partition)"
    if "QOS" in reason or "Assoc" in reason:
        return "your account or QOS limits hold the job: ask your admin or change --qos"
    return f"Slurm holds the job ({reason}): see `scontrol show job`, or raise boot_timeout"

"""What the launcher needs from an engine running elsewhere, and the wrapper's settings.

A launch target (ssh.py, slurm.py) starts the remote wrapper (wrapper.py) and returns a
`RemoteEngine`: where the engine answers (`root`), `poll()` like a local process (None while it
runs, else its exit code), `explain()` for failures only the target can name (a refused key, a
job past its time limit), and `stop()`, which stops the engine's process group and returns a
problem line or None.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evalrun.serving.contract import Contract

# (seconds since the boot began, phase): how a boot tells its progress, here or far away
BootProgress = Callable[[float, str], None]

WRAPPER_SOURCE = (Path(__file__).resolve().parent / "wrapper.py").read_text(encoding="utf-8")
MARK = "EVALRUN-REMOTE "
STOP_WAIT_S = 20.0


class RemoteEngine(Protocol):
    """An engine started on another machine; the launcher polls it like a child process."""

    root: str
    host: str
    port: int

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def ending(self) -> bool:
        """Whether the target is ending the engine (signalled, its final state not known yet)."""
        ...

    def explain(self, code: int | None) -> tuple[str, str, str] | None: ...

    def stop(self) -> str | None: ...


@dataclass(frozen=True)
class Boot:
    """What a launch target gets: the contract, its rendered argv and where the log goes."""

    contract: Contract
    argv: list[str]
    port: int  # 0: the wrapper picks a free one on the far side
    log_path: Path
    lane: int = 0
    tag: str = "engine"


def port_index(argv: list[str]) -> int:
    """Where the port value sits in the rendered argv (after the last --port)."""
    return len(argv) - 1 - argv[::-1].index("--port") + 1


def wrapper_config(boot: Boot, *, port: int, **extra: Any) -> str:
    """The wrapper's settings as one JSON line (secrets travel here, never on a command line)."""
    cfg = {
        "argv": boot.argv,
        "port_index": port_index(boot.argv),
        "port": port,
        "host": boot.contract.host,
        "env": boot.contract.env,
        "path_prepend": boot.contract.path_prepend,
        "tag": boot.tag,
        **extra,
    }
    return json.dumps(cfg) + "\n"


def read_mark(log_path: Path, start: int) -> dict[str, str] | None:
    """The wrapper's `EVALRUN-REMOTE pgid=.. port=.. host=..` line in this boot's part of the
    log, as a dict; None until it is there."""
    try:
        with log_path.open("rb") as fh:
            fh.seek(start)
            data = fh.read().decode(errors="replace")
    except OSError:
        return None
    for line in data.splitlines():
        if line.startswith(MARK) and "pgid=" in line:
            return dict(p.split("=", 1) for p in line[len(MARK) :].split() if "=" in p)
    return None


def run_quiet(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a short client command (ssh, squeue, scancel); a timeout reads as exit code 124."""
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return subprocess.CompletedProcess(argv, 124, out, f"timed out after {timeout:.0f}s")
    except FileNotFoundError:
        return subprocess.CompletedProcess(argv, 127, "", f"{argv[0]}: command not found")

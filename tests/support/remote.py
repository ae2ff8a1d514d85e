"""Real remote parts for the `remote` tier, started by the tests and torn down after them.

- `Sshd`: Debian's OpenSSH server on 127.0.0.1 and a free port, with a generated host key and a
  generated user key, its config in a temp dir (no system sshd involved);
- `SlurmCluster`: a single-node Slurm (munged, slurmctld, slurmd as root) for localhost, its
  munge key, slurm.conf, state and spool in a temp dir; SLURM_CONF points the clients at it.

Both need root (the container runs tests as root) and the Debian packages .ci/run installs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def available() -> str | None:
    """Why the remote tier cannot run here (None when it can)."""
    if os.geteuid() != 0:
        return "needs root (sshd and slurmd run as root in the test container)"
    for tool in (SSHD, "ssh", "ssh-keygen", "munged", "slurmctld", "slurmd", "sbatch"):
        if not shutil.which(tool):
            return f"{tool} is not installed (.ci/run installs openssh-server, slurm-wlm, munge)"
    return None


def _kill_pidfile(path: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        pid = int(path.read_text().split()[0])
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            os.kill(pid, 0)
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)


class Sshd:
    """An sshd on 127.0.0.1:<free port> that accepts one generated key for the current user."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="evalrun-sshd-"))
        self.port = free_port()
        self.key = self.dir / "user_key"
        self.other_key = self.dir / "other_key"  # a key the server does not know
        self.user = os.environ.get("USER") or "root"

    def start(self) -> Sshd:
        for key in ("host_key", "user_key", "other_key"):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.dir / key)],
                check=True,
            )
        shutil.copy(self.dir / "user_key.pub", self.dir / "authorized_keys")
        (self.dir / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.dir / 'host_key'}\n"
            f"PidFile {self.dir / 'sshd.pid'}\nAuthorizedKeysFile {self.dir / 'authorized_keys'}\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "PermitRootLogin prohibit-password\nStrictModes no\nAllowTcpForwarding local\n"
            "UseDNS no\nLogLevel ERROR\n"
        )
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation dir
        subprocess.run(
            [SSHD, "-f", str(self.dir / "sshd_config"), "-E", str(self.dir / "sshd.log")],
            check=True,
        )
        deadline = time.monotonic() + 10
        while not (self.dir / "sshd.pid").exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not start: {(self.dir / 'sshd.log').read_text()}")
            time.sleep(0.05)
        return self

    def launch(self, *, key: Path | None = None, forward: bool = True, **extra: object) -> dict:
        """A contract's `launch:` block for this server."""
        return {
            "kind": "ssh",
            "host": "127.0.0.1",
            "port": self.port,
            "user": self.user,
            "identity": str(key or self.key),
            "options": {"StrictHostKeyChecking": "no", "UserKnownHostsFile": "/dev/null"},
            "forward": forward,
            "python": sys.executable,  # the wrapper's interpreter (python3 on PATH by default)
            **extra,
        }

    def stop(self) -> None:
        _kill_pidfile(self.dir / "sshd.pid")
        shutil.rmtree(self.dir, ignore_errors=True)


class SlurmCluster:
    """slurmctld + slurmd for one node, localhost (127.0.0.1), 8 CPUs declared (jobs share it)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="evalrun-slurm-"))
        self.conf = self.dir / "slurm.conf"
        self._old_conf = os.environ.get("SLURM_CONF")

    def start(self) -> SlurmCluster:
        d = self.dir
        for sub in ("state", "spool", "munge", "run"):
            (d / sub).mkdir()
        key = d / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        sock = d / "munge" / "munge.sock"
        subprocess.run(
            ["munged", f"--key-file={key}", f"--socket={sock}", f"--pid-file={d}/munge/pid",
             f"--log-file={d}/munge/log", f"--seed-file={d}/munge/seed", "--force"],
            check=True,
        )  # fmt: skip
        self.conf.write_text(
            f"ClusterName=evalruntest\nSlurmctldHost=localhost(127.0.0.1)\n"
            f"SlurmctldPort={free_port()}\nSlurmdPort={free_port()}\n"
            "SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
            f"AuthInfo=socket={sock}\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n"
            f"SlurmctldPidFile={d}/run/slurmctld.pid\nSlurmdPidFile={d}/run/slurmd.pid\n"
            f"SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n"
            "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
            "JobAcctGatherType=jobacct_gather/none\nSelectType=select/cons_tres\n"
            "SelectTypeParameters=CR_CPU\nSlurmdParameters=config_overrides\nMpiDefault=none\n"
            "ReturnToService=2\nKillWait=2\nMinJobAge=60\nInactiveLimit=0\n"
            "SchedulerType=sched/builtin\n"
            "NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN\n"
            "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n"
        )
        os.environ["SLURM_CONF"] = str(self.conf)
        subprocess.run(["slurmctld", "-f", str(self.conf)], check=True)
        subprocess.run(["slurmd", "-f", str(self.conf)], check=True)
        deadline = time.monotonic() + 30
        while "idle" not in self.sinfo():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Slurm node did not come up: {self.sinfo()}")
            time.sleep(0.2)
        return self

    def sinfo(self) -> str:
        done = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True)
        return done.stdout

    def jobs(self) -> list[str]:
        """Every job Slurm still lists (pending, running or completing), as `id state name`."""
        done = subprocess.run(
            ["squeue", "-h", "-o", "%i %T %j"], capture_output=True, text=True, check=True
        )
        return [line for line in done.stdout.splitlines() if line.strip()]

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            subprocess.run(["scancel", "--user", "root"], timeout=10)
        for name in ("slurmd", "slurmctld"):
            _kill_pidfile(self.dir / "run" / f"{name}.pid")
        _kill_pidfile(self.dir / "munge" / "pid")
        if self._old_conf is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = self._old_conf
        shutil.rmtree(self.dir, ignore_errors=True)

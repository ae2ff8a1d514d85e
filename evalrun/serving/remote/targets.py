"""The one door to the launch targets: a contract's `launch:` block -> a started RemoteEngine."""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

from evalrun.serving.remote.compose import read_service
from evalrun.serving.remote.container import ContainerEngine
from evalrun.serving.remote.engine import Boot, RemoteEngine
from evalrun.serving.remote.slurm import SlurmEngine
from evalrun.serving.remote.spec import ComposeLaunch
from evalrun.serving.remote.ssh import SshEngine

Progress = Callable[[float, str], None]


def start_remote(
    boot: Boot, log: IO[bytes], *, local_port: int, on_progress: Progress | None = None
) -> RemoteEngine:
    """Start the contract's engine where its launch block says (ssh, slurm, a container or a compose service)."""
    kind = boot.contract.launch.kind
    if kind == "ssh":
        return SshEngine(boot, log, local_port)
    if kind == "slurm":
        return SlurmEngine(boot, log, on_progress)
    if kind == "container":
        return ContainerEngine(boot, log)
    if kind == "compose":
        assert isinstance(boot.contract.launch, ComposeLaunch)
        block, env = read_service(boot.contract.launch)
        return ContainerEngine(boot, log, block, env)
    raise ValueError(f"launch kind {kind!r} boots locally, not through start_remote")

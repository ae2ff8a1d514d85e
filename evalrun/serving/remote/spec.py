"""The `launch:` block of a contract: where the engine runs, separate from what it runs.

    launch: {kind: local}                      # the default: a child process of evalrun
    launch: {kind: ssh, host: gpu1, user: me, port: 22, identity: ~/.ssh/id_ed25519,
             options: {StrictHostKeyChecking: accept-new}, forward: true}
    launch: {kind: slurm, partition: gpu, nodes: 1, gres: "gpu:1", time: "00:30:00",
             sbatch_options: [--account=lab], srun_options: []}
    launch: {kind: container, runtime: podman, image: vllm/vllm-openai:v0.11.0, gpus: all,
             volumes: ["~/.cache/huggingface:/root/.cache/huggingface"], shm_size: 16g,
             options: [--ipc=host], network: bridge}
    launch: {kind: compose, file: ~/lanes/compose.yaml, service: vllm}

`host` may be a list: a pool of hosts, lane i of `bisect --lanes K` boots on host i (modulo).
A Slurm pool is K jobs of the same block. The block is part of the rendered contract hash.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Slurm --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS
SLURM_TIME = re.compile(r"^(\d+-)?\d+(:\d{1,2}){0,2}$|^\d+-\d+$")
# Slurm --gres: name[:type][:count], comma separated
SLURM_GRES = re.compile(r"^[A-Za-z][\w.-]*(:[\w.-]+)?(:\d+)?(,[A-Za-z][\w.-]*(:[\w.-]+)?(:\d+)?)*$")
SSH_OPTION = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
# docker --gpus: all, a count, or device=0,1 (podman reaches the same devices through CDI)
GPUS = re.compile(r"^(all|\d+|device=[\w-]+(,[\w-]+)*)$")


class LocalLaunch(BaseModel):
    """The engine is a child process of evalrun, on this machine (today's behaviour)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["local"] = "local"

    def for_lane(self, lane: int) -> LocalLaunch:
        """The block lane `lane` of a pool boots with: the same (k engines on this machine)."""
        return self


class SshLaunch(BaseModel):
    """The engine runs on another host, started over ssh by evalrun's remote wrapper."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["ssh"]
    host: str | list[str] = Field(description="Host to boot on; a list is a pool of lanes.")
    user: str | None = Field(
        default=None, description="Login name (ssh -l); ssh's default if unset."
    )
    port: int = Field(default=22, ge=1, le=65535, description="sshd's port (ssh -p).")
    identity: str | None = Field(default=None, description="Private key file (ssh -i).")
    options: dict[str, str] = Field(
        default_factory=dict, description="ssh -o NAME=VALUE options, e.g. StrictHostKeyChecking."
    )
    forward: bool = Field(
        default=True,
        description="Reach the engine through `ssh -L` (it may listen on the remote 127.0.0.1); "
        "false: at http://HOST:PORT (the engine must listen on an address evalrun can reach).",
    )
    python: str = Field(default="python3", description="Interpreter on the host for the wrapper.")

    @field_validator("host")
    @classmethod
    def _hosts(cls, value: Any) -> Any:
        hosts = [value] if isinstance(value, str) else value
        if not hosts or any(not str(h).strip() or str(h).startswith("-") for h in hosts):
            raise ValueError("name a host (or a list of hosts); a host cannot start with '-'")
        return value

    @field_validator("options")
    @classmethod
    def _option_names(cls, value: dict[str, str]) -> dict[str, str]:
        bad = [k for k in value if not SSH_OPTION.match(k)]
        if bad:
            raise ValueError(f"ssh option names are words like StrictHostKeyChecking, not {bad}")
        return value

    @property
    def hosts(self) -> list[str]:
        return [self.host] if isinstance(self.host, str) else list(self.host)

    def lane_host(self, lane: int) -> str:
        """The host lane `lane` of a pool boots on."""
        return self.hosts[lane % len(self.hosts)]

    def for_lane(self, lane: int) -> SshLaunch:
        """The block lane `lane` of a pool boots with: one host of the pool."""
        return self.model_copy(update={"host": self.lane_host(lane)})


class SlurmLaunch(BaseModel):
    """The engine runs in a Slurm job evalrun submits, on the node Slurm gives it."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["slurm"]
    partition: str | None = Field(default=None, description="sbatch --partition; the default one.")
    nodes: int = Field(default=1, ge=1, description="sbatch --nodes.")
    gres: str | None = Field(default=None, description='sbatch --gres, e.g. "gpu:1".')
    time: str | None = Field(default=None, description='sbatch --time, e.g. "00:30:00".')
    sbatch_options: list[str] = Field(default_factory=list, description="More sbatch options.")
    srun_options: list[str] = Field(
        default_factory=list,
        description="When set, the engine runs as `srun <these> ...` inside the job.",
    )
    python: str = Field(default="python3", description="Interpreter on the node for the wrapper.")
    heartbeat: float = Field(
        default=60.0,
        gt=0,
        description="Seconds without evalrun's heartbeat (a file beside the log) after which "
        "the job stops the engine itself: evalrun was killed.",
    )

    @field_validator("time")
    @classmethod
    def _time(cls, value: str | None) -> str | None:
        if value is not None and not SLURM_TIME.match(value):
            raise ValueError(f"time {value!r}: write minutes, HH:MM:SS or D-HH:MM:SS")
        return value

    @field_validator("gres")
    @classmethod
    def _gres(cls, value: str | None) -> str | None:
        if value is not None and not SLURM_GRES.match(value):
            raise ValueError(f"gres {value!r}: write name[:type][:count], e.g. gpu:1 or gpu:a100:2")
        return value

    def for_lane(self, lane: int) -> SlurmLaunch:
        """The block lane `lane` of a pool boots with: the same (one more job)."""
        return self


class ContainerLaunch(BaseModel):
    """The engine runs in a container on this machine, started with docker or podman."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["container"]
    image: str = Field(min_length=1, description="Image reference, present locally (no pulls).")
    runtime: str | None = Field(
        default=None,
        description="docker | podman (or a path to either); unset: the first that works here "
        "(docker when its daemon answers, else podman).",
    )
    gpus: str | None = Field(
        default=None, description='GPUs to pass in: "all", a count, or "device=0,1"; unset: none.'
    )
    volumes: list[str] = Field(
        default_factory=list, description="Bind mounts HOST:CONTAINER[:ro] (`~` expanded here)."
    )
    shm_size: str | None = Field(default=None, description='--shm-size, e.g. "16g".')
    options: list[str] = Field(
        default_factory=list, description="More `run` options, e.g. [--ipc=host, --memory=32g]."
    )
    network: Literal["bridge", "host"] = Field(
        default="bridge",
        description="bridge: the engine listens on 0.0.0.0 inside and its port is published on "
        "the contract's host; host: --network host (the engine binds this machine's port).",
    )
    init: bool = Field(
        default=True,
        description="--init: a tiny init as the container's pid 1 passes the stop signal to the "
        "engine and reaps its children (an engine as pid 1 ignores SIGTERM without a handler).",
    )
    stop_timeout: float = Field(
        default=10.0, ge=0, description="Seconds between the stop signal and SIGKILL."
    )

    @field_validator("gpus")
    @classmethod
    def _gpus(cls, value: str | None) -> str | None:
        if value is not None and not GPUS.match(value):
            raise ValueError(f'gpus {value!r}: write all, a count, or "device=0,1"')
        return value

    @field_validator("volumes")
    @classmethod
    def _volumes(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if len(v.split(":")) not in (2, 3) or not all(v.split(":")[:2])]
        if bad:
            raise ValueError(f"volumes {bad}: write HOST:CONTAINER or HOST:CONTAINER:ro")
        return value

    def for_lane(self, lane: int) -> ContainerLaunch:
        """The block lane `lane` of a pool boots with: the same (one more container)."""
        return self


class ComposeLaunch(BaseModel):
    """The engine runs in a container made from one service of a compose file (serving/remote/
    compose.py reads it: image, volumes, environment, GPUs, shm_size, ipc, network_mode, ...)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["compose"]
    file: str = Field(min_length=1, description="The compose file (`~` expanded).")
    service: str = Field(min_length=1, description="The service whose container runs the engine.")
    runtime: str | None = Field(
        default=None, description="docker | podman (or a path); unset: as for kind container."
    )
    stop_timeout: float = Field(
        default=10.0, ge=0, description="Seconds between the stop signal and SIGKILL."
    )

    def for_lane(self, lane: int) -> ComposeLaunch:
        """The block lane `lane` of a pool boots with: the same (one more container)."""
        return self


# Launch kinds whose engine listens on this machine's port, though not as evalrun's child.
PORT_HERE = frozenset({"container", "compose"})

LAUNCH_KINDS: dict[str, type[BaseModel]] = {
    "local": LocalLaunch,
    "ssh": SshLaunch,
    "slurm": SlurmLaunch,
    "container": ContainerLaunch,
    "compose": ComposeLaunch,
}
Launch = Annotated[
    LocalLaunch | SshLaunch | SlurmLaunch | ContainerLaunch | ComposeLaunch,
    Field(discriminator="kind"),
]

"""The container runtime on this machine: which one works, what an image is, GPUs, owners.

`find_runtime` picks docker or podman (docker only when its daemon answers `docker info`; a
docker client without a daemon falls through to podman) and says what it tried when neither works;
`image_facts` is the image's reference, id and digest for run.json; `launch_problems` is what
`evalrun lint` says about a container block; the owner label (host, pid, start time of the
evalrun that started a container) is what the sweep at the next boot reads to remove the
containers of an evalrun that died with its watchdog.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import socket
from pathlib import Path

from evalrun.base.errors import BootError
from evalrun.serving.remote.engine import run_quiet
from evalrun.serving.remote.spec import ContainerLaunch

LABEL = "evalrun.owner"  # host:pid:start-time of the evalrun that started the container
INFO_TIMEOUT_S = 30.0
CLIENT_TIMEOUT_S = 60.0


# The runtime ----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _works(executable: str) -> str | None:
    """None when `RUNTIME info` answers; else its first complaint (no docker daemon, ...)."""
    done = run_quiet([executable, "info", "--format", "{{json .}}"], INFO_TIMEOUT_S)
    if done.returncode == 0:
        return None
    lines = [ln.strip() for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
    pick = next((ln for ln in lines if "rror" in ln or "annot" in ln), lines[-1] if lines else "")
    return pick[:200] or f"exit code {done.returncode}"


def find_runtime(launch: ContainerLaunch) -> str:
    """The runtime's executable: launch.runtime, else docker when its daemon answers, else
    podman. BootError (runtime_missing, runtime_broken) with what was tried."""
    names = [launch.runtime] if launch.runtime else ["docker", "podman"]
    tried: list[str] = []
    for name in names:
        path = shutil.which(os.path.expanduser(name))
        if path is None:
            tried.append(f"{name}: not found")
            continue
        problem = _works(path)
        if problem is None:
            return path
        tried.append(f"{name}: {problem}")
    if all(t.endswith(": not found") for t in tried):
        raise BootError(
            f"no container runtime here ({'; '.join(tried)})",
            kind="runtime_missing",
            hint="install podman (Debian: apt-get install podman runc) or docker, "
            "or set launch.runtime to its path",
        )
    docker = any(t.startswith("docker:") and "daemon" in t for t in tried)
    raise BootError(
        f"no working container runtime ({'; '.join(tried)})",
        kind="runtime_broken",
        hint=(
            "start the docker daemon (systemctl start docker) or set launch.runtime: podman"
            if docker
            else f"run `{names[-1]} info` by hand and fix what it says"
        ),
    )


def image_facts(runtime: str, image: str) -> dict[str, str] | None:
    """{image, id, digest, runtime, runtime_version} of a local image; None when it is not here."""
    done = run_quiet(
        [runtime, "image", "inspect", "--format", "{{.Id}} {{json .RepoDigests}}", image],
        CLIENT_TIMEOUT_S,
    )
    if done.returncode != 0 or not done.stdout.strip():
        return None
    image_id, _, digests = done.stdout.strip().partition(" ")
    repo = [str(d) for d in (json.loads(digests or "null") or [])]
    version = run_quiet([runtime, "--version"], INFO_TIMEOUT_S).stdout.strip()
    return {
        "image": image,
        "id": image_id,
        "digest": repo[0].rpartition("@")[2] if repo else "",
        "runtime": Path(runtime).name,
        "runtime_version": version,
    }


def gpu_flags(runtime: str, gpus: str | None) -> list[str]:
    """docker: --gpus; podman: CDI devices (nvidia.com/gpu=all, or one per listed device)."""
    if gpus is None:
        return []
    if "podman" not in Path(runtime).name:
        return ["--gpus", f'"{gpus}"' if "," in gpus else gpus]
    if gpus == "all" or gpus.isdigit():
        return ["--device", "nvidia.com/gpu=all"]
    devices = gpus.split("=", 1)[1].split(",")
    return [arg for d in devices for arg in ("--device", f"nvidia.com/gpu={d}")]


def host_has_gpus() -> bool:
    return Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi") is not None


def cdi_specs() -> list[Path]:
    """The CDI specs podman reads GPUs from (/etc/cdi, /var/run/cdi)."""
    return [p for d in ("/etc/cdi", "/var/run/cdi") for p in sorted(Path(d).glob("*.*ml"))]


def launch_problems(launch: ContainerLaunch) -> list[tuple[str, str, str, str]]:
    """What `evalrun lint` says about a container block: (kind, level, message, fix) for a
    runtime that is missing or does not work, an image that is not here, a mount whose source
    does not exist, and GPUs asked for on a host without them."""
    out: list[tuple[str, str, str, str]] = []
    try:
        runtime: str | None = find_runtime(launch)
    except BootError as exc:
        runtime = None
        out.append((f"launch_{exc.kind}", "error", exc.message, exc.hint or ""))
    if runtime is not None and image_facts(runtime, launch.image) is None:
        rt = Path(runtime).name
        out.append(
            (
                "launch_image_missing",
                "error",
                f"image {launch.image} is not in {rt}'s local storage (evalrun never pulls)",
                f"`{rt} pull {launch.image}`, `{rt} load -i FILE` or `{rt} import` it first",
            )
        )
    for volume in launch.volumes:
        source = os.path.expanduser(volume.split(":", 1)[0])
        if source.startswith(("/", ".")) and not Path(source).exists():
            out.append(
                (
                    "launch_volume_missing",
                    "error",
                    f"launch.volumes: {source} does not exist here",
                    "create it, or fix the mount's source path",
                )
            )
    if launch.gpus is not None and not host_has_gpus():
        out.append(
            (
                "launch_no_gpus",
                "error",
                f"launch.gpus: {launch.gpus}, but this host has no NVIDIA GPU "
                "(no /dev/nvidia0, no nvidia-smi)",
                "drop launch.gpus for a CPU engine, or lint on the GPU host",
            )
        )
    elif launch.gpus is not None and runtime and "podman" in runtime and not cdi_specs():
        out.append(
            (
                "launch_no_cdi",
                "warning",
                "podman passes GPUs through CDI, and /etc/cdi holds no spec",
                "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
            )
        )
    return out


# Owners, labels and the sweep -----------------------------------------------------------------------


def _start_time(pid: int) -> str:
    """A process's start time in clock ticks since boot ('' when it does not run): a pid the
    system reused for another process does not match."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def owner_label(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_time(pid)}"


def owner_alive(label: str) -> bool:
    """Whether the evalrun a label names still runs (True for another host's: not ours to judge)."""
    host, _, rest = label.partition(":")
    pid, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    return bool(start) and _start_time(int(pid)) == start


def sweep(runtime: str) -> list[str]:
    """Remove the containers of evalrun processes on this host that died without doing so (the
    watchdog was killed too); the names removed."""
    done = run_quiet(
        [runtime, "ps", "-a", "--filter", f"label={LABEL}", "--format", "{{.ID}} {{.Labels}}"],
        CLIENT_TIMEOUT_S,
    )
    stale = []
    for line in done.stdout.splitlines():
        cid, _, labels = line.partition(" ")
        match = re.search(rf"{re.escape(LABEL)}[=:]([^\s,}}\]]+)", labels)
        if cid and match and not owner_alive(match.group(1)):
            stale.append(cid)
    if stale:
        run_quiet([runtime, "rm", "-f", *stale], CLIENT_TIMEOUT_S)
    return stale

"""Boot a contract in the container one service of a compose file describes
(`launch: {kind: compose, file: compose.yaml, service: vllm}`).

No compose tool runs. Many hosts have neither the `docker compose` plugin nor `podman compose`
(this one has neither), and Debian's podman-compose (1.0.3) makes `run SERVICE` also start the
service's own container detached (a second engine), leaves a project network behind and takes
env values on its command line. evalrun reads the service itself and boots it as a `container` block (container.py):
the contract's command and args still say what runs (they are what bisect varies), the service
says with what (image, mounts, environment, GPUs, memory), and everything else of the container
block holds (labels, the watchdog, the sweep, the classified failures).

Read: image, volumes (short and long syntax; relative sources against the file's folder),
environment (a map or a list; passed by name, never on a command line), shm_size, ipc,
network_mode (host), user, working_dir, privileged, cap_add, mem_limit, ulimits, devices, labels,
`runtime: nvidia` and deploy.resources.reservations.devices (GPUs: count or device_ids).
`${VAR}`, `${VAR:-default}` and `$$` are interpolated from this environment as compose does.
Ignored, since evalrun owns them: command and entrypoint (the contract's command runs), ports (the
contract's port is published), container_name (each lane's container has its own name), restart,
healthcheck (readiness is evalrun's), logging, stdin_open, tty. Any other key (build, env_file,
depends_on, networks, secrets, ...) is a boot failure that names it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from evalrun.base.errors import BootError
from evalrun.serving.remote.spec import ComposeLaunch, ContainerLaunch

IGNORED = {"command", "entrypoint", "ports", "expose", "container_name", "restart", "healthcheck",
           "logging", "stdin_open", "tty", "hostname", "init", "stop_grace_period"}  # fmt: skip
READ = {"image", "volumes", "environment", "shm_size", "ipc", "network_mode", "user",
        "working_dir", "privileged", "cap_add", "mem_limit", "ulimits", "devices", "labels",
        "runtime", "deploy"}  # fmt: skip
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_]\w*)(?::?-([^}]*))?\}|\$([A-Za-z_]\w*)")


def _interpolate(value: Any) -> Any:
    """Compose's variable substitution, from this process's environment."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            if m.group(0) == "$$":
                return "$"
            name = m.group(1) or m.group(3)
            got = os.environ.get(name)
            return got if got else (m.group(2) or "")

        return _VAR.sub(sub, value)
    if isinstance(value, list):
        return [_interpolate(v) for v in value]
    if isinstance(value, dict):
        return {k: _interpolate(v) for k, v in value.items()}
    return value


def _fail(message: str, hint: str, kind: str = "compose_unsupported") -> BootError:
    return BootError(message, kind=kind, hint=hint)


def _volume(item: Any, folder: Path) -> str:
    if isinstance(item, dict):
        source, target = str(item.get("source", "")), str(item.get("target", ""))
        mode = ":ro" if item.get("read_only") else ""
    else:
        source, _, rest = str(item).partition(":")
        target, _, mode = rest.partition(":")
        mode = f":{mode}" if mode else ""
    if not source or not target:
        raise _fail(f"compose volume {item!r}: name a source and a target", "fix the volume")
    if source.startswith("."):
        source = str((folder / source).resolve())
    return f"{source}:{target}{mode}"


def _environment(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    out = {}
    for item in value or []:
        key, sep, val = str(item).partition("=")
        out[key] = val if sep else os.environ.get(key, "")
    return out


def _gpus(service: dict[str, Any]) -> str | None:
    """GPUs the service reserves: deploy.resources.reservations.devices, or `runtime: nvidia`."""
    devices = (
        ((service.get("deploy") or {}).get("resources") or {}).get("reservations") or {}
    ).get("devices") or []
    for device in devices:
        if "gpu" not in (device.get("capabilities") or ["gpu"]):
            continue
        if device.get("device_ids"):
            return "device=" + ",".join(str(d) for d in device["device_ids"])
        count = device.get("count", "all")
        return "all" if str(count) == "all" else str(int(count))
    return "all" if service.get("runtime") == "nvidia" else None


def read_service(launch: ComposeLaunch) -> tuple[ContainerLaunch, dict[str, str]]:
    """The service as a container block, and its environment; BootError naming what is wrong."""
    path = Path(os.path.expanduser(launch.file))
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _fail(
            f"compose file {path}: {exc.strerror}", "fix launch.file", "compose_file"
        ) from exc
    except yaml.YAMLError as exc:
        raise _fail(f"compose file {path} is not YAML: {exc}", "fix it", "compose_file") from exc
    services = doc.get("services") if isinstance(doc, dict) else None
    if not isinstance(services, dict) or not isinstance(services.get(launch.service), dict):
        names = ", ".join(services or {}) if isinstance(services, dict) else "none"
        raise _fail(
            f"compose file {path} has no service {launch.service!r} (services: {names})",
            "fix launch.service",
            "compose_file",
        )
    service: dict[str, Any] = _interpolate(services[launch.service])
    unknown = sorted(set(service) - READ - IGNORED)
    if unknown:
        raise _fail(
            f"compose service {launch.service}: {', '.join(unknown)} not supported by evalrun",
            "boot what it needs yourself, or move it into the contract (env, launch options)",
        )
    if not service.get("image"):
        raise _fail(
            f"compose service {launch.service} names no image (evalrun builds nothing)",
            "build and tag the image first (docker compose build), and name it in `image:`",
        )
    network = service.get("network_mode", "bridge")
    if network not in ("bridge", "host"):
        raise _fail(f"compose network_mode {network!r}", "use bridge or host")
    options = []
    for key, flag in (("ipc", "--ipc"), ("user", "--user"), ("working_dir", "--workdir"),
                      ("mem_limit", "--memory")):  # fmt: skip
        if service.get(key) is not None:
            options.append(f"{flag}={service[key]}")
    if service.get("privileged"):
        options.append("--privileged")
    options += [f"--cap-add={c}" for c in service.get("cap_add") or []]
    options += [f"--device={d}" for d in service.get("devices") or []]
    for name, limit in (service.get("ulimits") or {}).items():
        soft, hard = (
            (limit.get("soft"), limit.get("hard")) if isinstance(limit, dict) else (limit,) * 2
        )
        options.append(f"--ulimit={name}={soft}:{hard}")
    for key, value in _environment(service.get("labels")).items():
        options += ["--label", f"{key}={value}"]
    block = ContainerLaunch(
        kind="container",
        image=str(service["image"]),
        runtime=launch.runtime,
        gpus=_gpus(service),
        volumes=[_volume(v, path.parent) for v in service.get("volumes") or []],
        shm_size=str(service["shm_size"]) if service.get("shm_size") else None,
        options=options,
        network="host" if network == "host" else "bridge",
        stop_timeout=launch.stop_timeout,
    )
    return block, _environment(service.get("environment"))

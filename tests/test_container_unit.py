"""The container launch block without a container runtime: the block's schema, the `run` command
evalrun builds, which runtime it picks (stand-in docker and podman executables on PATH: shell
scripts that answer `info` the way each does), the owner labels the sweep reads, and lint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalrun.base.errors import BootError, ConfigError
from evalrun.serving.contract import contract_from_data, contract_hash, render_argv
from evalrun.serving.lint import lint_contract
from evalrun.serving.remote import runtime as container
from evalrun.serving.remote.container import ContainerLaunch, run_argv
from evalrun.serving.remote.engine import Boot
from evalrun.serving.remote.runtime import find_runtime, gpu_flags, owner_alive, owner_label

DAEMONLESS = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."


def contract(**launch: object) -> object:
    return contract_from_data({
        "name": "vllm-gpu", "engine": "vllm", "command": ["vllm", "serve"], "model": "org/m",
        "port": 8000, "env": {"HF_TOKEN": "hf_secret_1234", "VLLM_X": "1"},
        "launch": {"kind": "container", "image": "vllm/vllm-openai:v0.11.0", **launch},
    })  # fmt: skip


def boot_of(c: object, tmp_path: Path) -> Boot:
    argv = render_argv(c, port=8000)  # type: ignore[arg-type]
    return Boot(contract=c, argv=argv, port=8000, log_path=tmp_path / "run-1" / "server.log")  # type: ignore[arg-type]


def test_the_block_parses_and_rejects_what_no_runtime_takes():
    c = contract(gpus="device=0,1", volumes=["~/hf:/root/.cache/huggingface:ro"], shm_size="16g")
    assert isinstance(c.launch, ContainerLaunch) and c.remote
    assert c.launch.network == "bridge" and c.launch.init
    for bad, word in (({"gpus": "two"}, "gpus"), ({"volumes": ["/only-one"]}, "volumes"),
                      ({"network": "overlay"}, "network"), ({"imag": "x"}, "did you mean")):  # fmt: skip
        with pytest.raises(ConfigError, match=word):
            contract(**bad)
    # the block is part of the trial cache key: another image is another trial
    assert contract_hash(contract()) != contract_hash(contract(image="vllm/vllm-openai:v0.12.0"))


def test_run_command_publishes_the_port_and_passes_env_by_name(tmp_path):
    c = contract(volumes=["~/hf:~/hf:ro"], shm_size="16g", options=["--ipc=host"])
    argv = run_argv("/usr/bin/podman", boot_of(c, tmp_path), "evalrun-x-1", None)
    line = " ".join(argv)
    assert argv[:4] == ["/usr/bin/podman", "run", "--name", "evalrun-x-1"]
    assert f"--label evalrun.owner={owner_label()}" in line and "--label evalrun.run=run-1" in line
    assert "-p 127.0.0.1:8000:8000" in line and "--network" not in line
    home = os.path.expanduser("~")
    assert f"-v {home}/hf:{home}/hf:ro" in line and "--shm-size 16g" in line
    assert "-e HF_TOKEN -e VLLM_X" in line and "hf_secret" not in line  # values never on argv
    assert "--ipc=host --entrypoint vllm vllm/vllm-openai:v0.11.0 serve org/m" in line
    assert argv[argv.index("--host") + 1] == "0.0.0.0"  # reachable through the published port
    host = run_argv("podman", boot_of(contract(network="host"), tmp_path), "n", None)
    assert "--network host" in " ".join(host) and host[host.index("--host") + 1] == "127.0.0.1"


def test_path_prepend_goes_in_front_of_the_image_path(tmp_path):
    c = contract_from_data({
        "name": "lane", "engine": "vllm", "command": ["vllm", "serve"], "model": "m",
        "path_prepend": ["~/venv/bin"], "launch": {"kind": "container", "image": "base:1"},
    })  # fmt: skip
    argv = run_argv("podman", boot_of(c, tmp_path), "n", "/usr/bin:/bin")
    assert f"PATH={os.path.expanduser('~')}/venv/bin:/usr/bin:/bin" in argv


def test_gpu_flags_for_docker_and_podman():
    assert gpu_flags("/usr/bin/docker", "all") == ["--gpus", "all"]
    assert gpu_flags("docker", "device=0,1") == ["--gpus", '"device=0,1"']
    assert gpu_flags("podman", "all") == ["--device", "nvidia.com/gpu=all"]
    assert gpu_flags("podman", "device=0,1") == [
        "--device", "nvidia.com/gpu=0", "--device", "nvidia.com/gpu=1"]  # fmt: skip
    assert gpu_flags("podman", None) == []


def test_owner_labels_name_a_live_or_dead_evalrun():
    assert owner_alive(owner_label())
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True)  # fmt: skip
    dead = owner_label(int(done.stdout))  # the process is gone: no start time
    assert not owner_alive(dead)
    me = owner_label().split(":")
    assert not owner_alive(":".join([me[0], me[1], "1"]))  # a reused pid: another start time
    assert owner_alive(f"another-host:{me[1]}:1")  # not this host's to judge


def fake_runtimes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **scripts: str) -> None:
    """Executables named docker/podman on a PATH of their own: `info` prints or fails."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, body in scripts.items():
        exe = bindir / name
        exe.write_text(f"#!/bin/sh\n{body}\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    container._works.cache_clear()


def test_podman_is_picked_when_docker_has_no_daemon(tmp_path, monkeypatch):
    fake_runtimes(tmp_path, monkeypatch, docker=f"echo '{DAEMONLESS}' >&2; exit 1",
                  podman="echo '{}'")  # fmt: skip
    assert find_runtime(ContainerLaunch(kind="container", image="x")).endswith("/podman")


def test_docker_with_a_daemon_comes_first(tmp_path, monkeypatch):
    fake_runtimes(tmp_path, monkeypatch, docker="echo '{}'", podman="echo '{}'")
    assert find_runtime(ContainerLaunch(kind="container", image="x")).endswith("/docker")


def test_no_working_runtime_says_what_was_tried(tmp_path, monkeypatch):
    fake_runtimes(tmp_path, monkeypatch, docker=f"echo '{DAEMONLESS}' >&2; exit 1")
    with pytest.raises(BootError) as err:
        find_runtime(ContainerLaunch(kind="container", image="x"))
    assert err.value.kind == "runtime_broken"
    assert (
        "docker: Cannot connect" in err.value.message and "podman: not found" in err.value.message
    )
    assert "start the docker daemon" in (err.value.hint or "")
    (tmp_path / "none").mkdir()
    fake_runtimes(tmp_path / "none", monkeypatch)
    with pytest.raises(BootError) as err:
        find_runtime(ContainerLaunch(kind="container", image="x"))
    assert err.value.kind == "runtime_missing" and "apt-get install podman" in (
        err.value.hint or ""
    )


def test_lint_names_a_missing_runtime_volume_and_gpus(tmp_path, monkeypatch):
    fake_runtimes(tmp_path, monkeypatch)  # nothing on PATH
    path = tmp_path / "c.yaml"
    data = {"name": "x", "engine": "vllm", "command": ["vllm", "serve"], "model": "m", "port": 0,
            "launch": {"kind": "container", "image": "vllm/vllm-openai:v0.11.0", "gpus": "all",
                       "volumes": ["/no/such/dir:/models"]}}  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    kinds = {f.kind for f in lint_contract(path).findings}
    assert "launch_runtime_missing" in kinds and "launch_volume_missing" in kinds
    if not container.host_has_gpus():
        assert "launch_no_gpus" in kinds
    # the image's own files are not this machine's: no executable_missing for `vllm`
    assert not any(
        "vllm" in f.message and "PATH" in f.message for f in lint_contract(path).findings
    )


# Compose: a service read as a container block -----------------------------------------------------

COMPOSE = """
services:
  vllm:
    image: docker.io/vllm/vllm-openai:${VLLM_TAG:-v0.11.0}
    command: ["--model", "ignored: the contract's command runs"]
    ports: ["8000:8000"]
    volumes:
      - ./models:/models:ro
      - type: bind
        source: /srv/hf
        target: /root/.cache/huggingface
        read_only: true
    environment:
      HF_TOKEN: ${TEST_COMPOSE_TOKEN}
      VLLM_LOGGING_LEVEL: INFO
    shm_size: 16gb
    ipc: host
    mem_limit: 64g
    ulimits: {memlock: -1}
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["0", "1"], capabilities: [gpu]}]
  proxy:
    image: nginx
"""


def compose_block(tmp_path: Path, text: str, service: str = "vllm"):
    from evalrun.serving.remote.compose import read_service
    from evalrun.serving.remote.spec import ComposeLaunch

    (tmp_path / "compose.yaml").write_text(text)
    return read_service(ComposeLaunch(kind="compose", file=str(tmp_path / "compose.yaml"),
                                      service=service, runtime="podman"))  # fmt: skip


def test_a_compose_service_reads_as_a_container_block(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_COMPOSE_TOKEN", "hf_from_env_5678")
    block, env = compose_block(tmp_path, COMPOSE)
    assert block.image == "docker.io/vllm/vllm-openai:v0.11.0"  # ${VAR:-default}
    assert block.volumes == [f"{tmp_path}/models:/models:ro", "/srv/hf:/root/.cache/huggingface:ro"]
    assert block.gpus == "device=0,1" and block.shm_size == "16gb" and block.runtime == "podman"
    assert block.options == ["--ipc=host", "--memory=64g", "--ulimit=memlock=-1:-1"]
    assert env == {"HF_TOKEN": "hf_from_env_5678", "VLLM_LOGGING_LEVEL": "INFO"}
    c = contract_from_data({"name": "c", "engine": "vllm", "command": ["vllm", "serve"],
                            "model": "m", "port": 8000,
                            "launch": {"kind": "compose", "file": "x.yaml", "service": "vllm"}})  # fmt: skip
    argv = run_argv("podman", boot_of(c, tmp_path), "n", None, block, env)
    assert "-e HF_TOKEN -e VLLM_LOGGING_LEVEL" in " ".join(argv)
    assert "hf_from_env" not in " ".join(argv)  # by name only
    assert argv[argv.index("--entrypoint") + 1 :][:3] == ["vllm", block.image, "serve"]


@pytest.mark.parametrize(
    ("text", "service", "words"),
    [
        ("services:\n  vllm:\n    image: x\n    depends_on: [db]\n", "vllm", "depends_on"),
        ("services:\n  vllm:\n    build: .\n", "vllm", "build"),
        ("services:\n  vllm:\n    command: serve\n", "vllm", "names no image"),
        ("services:\n  proxy:\n    image: nginx\n", "vllm", "services: proxy"),
        ("services: [", "vllm", "not YAML"),
    ],
)
def test_what_a_compose_service_cannot_say_is_named(tmp_path, text, service, words):
    with pytest.raises(BootError) as err:
        compose_block(tmp_path, text, service)
    assert words in err.value.message and err.value.hint


# The runtime's own failures, classified: a stand-in runtime that fails `run` as each real one does

FAKE_RUNTIME = """#!/bin/sh
case "$1" in
  info|--version) echo 'podman version 4.3.1' ;;
  image) echo 'sha256:abc ["localhost/x@sha256:def"]' ;;
  ps|stop|rm) ;;
  inspect) echo '{"OOMKilled": %(oom)s, "ExitCode": %(code)s}' ;;
  container) exit 1 ;;
  run) echo '%(said)s' >&2; exit %(code)s ;;
esac
"""


@pytest.mark.parametrize(
    ("said", "code", "oom", "kind"),
    [
        ("Error: rootlessport listen tcp 127.0.0.1:8000: bind: address already in use", 125,
         "false", "port_in_use"),
        ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all", 125,
         "false", "gpus_unavailable"),
        ("Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: OCI permission denied",
         125, "false", "runtime_broken"),
        ("Error: unknown flag: --no-such-option", 125, "false", "container_failed"),
        ("Error: runc: exec: vllm: executable file `vllm` not found in $PATH", 127, "false",
         "executable_not_found"),
        ("INFO loading weights", 137, "true", "oom_killed"),
    ],
)  # fmt: skip
def test_the_runtime_s_own_failures_are_classified(tmp_path, said, code, oom, kind):
    from evalrun.serving.launcher import boot_server

    runtime = tmp_path / "podman"
    runtime.write_text(FAKE_RUNTIME % {"said": said, "code": code, "oom": oom})
    runtime.chmod(0o755)
    c = contract_from_data({
        "name": "c", "engine": "vllm", "command": ["vllm", "serve"], "model": "m", "port": 0,
        "launch": {"kind": "container", "image": "x", "runtime": str(runtime)},
    })  # fmt: skip
    with pytest.raises(BootError) as err:
        with boot_server(c, tmp_path / "server.log"):
            pass
    assert err.value.kind == kind, err.value.message
    assert err.value.hint and f"code {code}" in err.value.message

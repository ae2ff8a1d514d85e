"""Request options: where a run's chat requests go, the key they carry, and the sampling and body
fields sent with every one of them.

The address is the OpenAI base URL (`normalise_endpoint`: 'host:8000' and
'.../v1/chat/completions' both become '.../v1'); the key comes from `--api-key-env VAR` or
OPENAI_API_KEY (`resolve_api_key`) and is never stored, only where it came from.

The same thing three ways: CLI flags (`--temperature`, `--top-p`, `--request-seed`, `--max-tokens-scale`,
`--extra-body JSON|@file.yaml`, `--header K:V`), a contract's `request:` block (known sampling keys
are lifted out of it, the rest is extra body), and the Python API. Defaults are deterministic
(temperature 0). run.json records them (header values redacted), and compare/signoff warn when two
runs were sent different options.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from evalrun.base.errors import UsageError
from evalrun.base.jsondata import JSONObject, as_written
from evalrun.endpoint.logprobs import DEFAULT_TOKENS, DEFAULT_TOP_K, MAX_TOKENS, MAX_TOP_K

# Body keys evalrun sets itself per item: extra body may not override them.
_RESERVED = frozenset({"model", "messages", "tools", "tool_choice", "stream"})
_SAMPLING = ("temperature", "top_p", "seed")
# Kept in run.json's `sampling` beside the options but not sent to the engine.
_NOT_OPTIONS = frozenset({"repeats"})


class SamplingRecord(TypedDict, total=False):
    """run.json's `sampling`: the options that differ from the defaults, and always temperature
    and top_logprobs."""

    temperature: float
    top_p: float
    seed: int
    max_tokens_scale: float
    headers: dict[str, str]  # values redacted to ***
    top_logprobs: int | None
    logprob_tokens: int
    extra: JSONObject  # the extra body, as the user gave it
    repeats: int  # score --repeats K, when K > 1 (not an option: not sent)


class RequestOptions(BaseModel):
    """Fields merged into every chat request of a run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0.0, description="Sampling temperature.")
    top_p: float | None = Field(default=None, gt=0.0, le=1.0, description="Nucleus sampling.")
    seed: int | None = Field(default=None, description="Sampling seed, for engines that take one.")
    max_tokens_scale: float = Field(
        default=1.0, gt=0.0, description="Each item's max_tokens times this (rounded up)."
    )
    extra_body: JSONObject = Field(
        default_factory=dict, description="Merged into every request body (chat_template_kwargs)."
    )
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers.")
    top_logprobs: int | None = Field(
        default=DEFAULT_TOP_K,
        ge=0,
        le=MAX_TOP_K,
        description="Alternatives per token asked with `logprobs: true` (None: no logprobs; "
        "the tokens ride on the suite's own requests, endpoint/logprobs.py).",
    )
    logprob_tokens: int = Field(
        default=DEFAULT_TOKENS,
        ge=1,
        le=MAX_TOKENS,
        description="Tokens of each answer kept in tokens.jsonl.",
    )

    def body(self, max_tokens: int | None) -> JSONObject:
        """The sampling part of one request body (extra body not included)."""
        out: JSONObject = {"temperature": self.temperature}
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.seed is not None:
            out["seed"] = self.seed
        if max_tokens is not None:
            out["max_tokens"] = math.ceil(max_tokens * self.max_tokens_scale)
        return out

    def record(self) -> SamplingRecord:
        """What run.json keeps: every option, header values redacted (they may hold secrets)."""
        data = self.model_dump(mode="json", exclude_defaults=True)
        data["temperature"] = self.temperature
        data["top_logprobs"] = self.top_logprobs  # part of a probe's identity: tokens or none
        if self.headers:
            data["headers"] = {k: "***" for k in sorted(self.headers)}
        if self.extra_body:
            data["extra"] = data.pop("extra_body")
        return as_written(SamplingRecord, data)

    def with_contract(self, request: JSONObject) -> RequestOptions:
        """These options over a contract's `request:` block: its sampling keys become options
        unless set here, the rest joins the extra body (keys set here win)."""
        base = dict(request or {})
        lifted = {k: base.pop(k) for k in _SAMPLING if k in base}
        explicit = self.model_fields_set
        update = {k: v for k, v in lifted.items() if k not in explicit}
        update["extra_body"] = {**base, **self.extra_body}
        return build_options(**{**self.model_dump(), **update})


def build_options(**fields: Any) -> RequestOptions:
    """RequestOptions from keyword fields (None means unset); UsageError on a bad value."""
    # top_logprobs=None is a value (no logprobs), not "unset": callers leave the key out instead.
    given = {k: v for k, v in fields.items() if v is not None or k == "top_logprobs"}
    try:
        options = RequestOptions(**given)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise UsageError(f"request option {where}: {err['msg']}") from exc
    clash = sorted(_RESERVED & set(options.extra_body))
    if clash:
        raise UsageError(
            f"--extra-body may not set {', '.join(clash)}: evalrun sends those per item "
            "(use --model for the model)"
        )
    return options


def parse_extra_body(text: str) -> JSONObject:
    """`--extra-body`: a JSON object, or @file.json / @file.yaml holding one."""
    source = "--extra-body"
    if text.startswith("@"):
        path = Path(text[1:]).expanduser()
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--extra-body {text}: cannot read {path} ({exc.strerror})") from exc
        source = f"--extra-body {text}"
        if path.suffix in (".yaml", ".yml"):
            import yaml

            try:
                data = yaml.safe_load(raw)
            except yaml.YAMLError as exc:
                raise UsageError(f"{source}: not valid YAML ({exc})") from exc
            return _object(data, source)
        text = raw
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{source}: not a JSON object ({exc.msg}); e.g. "
            """'{"chat_template_kwargs": {"enable_thinking": false}}' or @body.yaml"""
        ) from exc
    return _object(data, source)


def _object(data: Any, source: str) -> JSONObject:
    if not isinstance(data, dict):
        raise UsageError(f"{source}: needs a JSON/YAML object (mapping), got {type(data).__name__}")
    return data


def parse_headers(values: list[str]) -> dict[str, str]:
    """`--header K:V` (repeatable) as a dict; UsageError when one has no colon or name."""
    out: dict[str, str] = {}
    for value in values:
        name, sep, rest = value.partition(":")
        if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
            raise UsageError(f"--header {value!r}: write it as Name:value, e.g. X-Team:evals")
        out[name.strip()] = rest.strip()
    return out


def options_differ(a: Mapping[str, object], b: Mapping[str, object]) -> list[str]:
    """Recorded request options (run.json `sampling`) that differ between two runs, by name."""
    keys = sorted((set(a) | set(b)) - _NOT_OPTIONS)
    defaults: Mapping[str, object] = RequestOptions().record()
    return [k for k in keys if a.get(k, defaults.get(k)) != b.get(k, defaults.get(k))]


def normalise_endpoint(endpoint: str) -> str:
    """The OpenAI base URL: 'host:8000', 'http://h:8000', '.../v1/chat/completions' -> '.../v1'."""
    text = endpoint.strip()
    if not text:
        raise UsageError("empty --endpoint; pass the server's URL, e.g. http://127.0.0.1:8000/v1")
    if "://" not in text:
        text = "http://" + text
    example = "pass e.g. http://127.0.0.1:8000/v1"
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # an unclosed [IPv6 bracket
        raise UsageError(f"--endpoint {endpoint!r}: {exc}; {example}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--endpoint {endpoint!r} is not an http(s) URL with a host; {example}")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port's range only when asked
    except ValueError as exc:
        raise UsageError(f"--endpoint {endpoint!r}: {exc}; pass a port from 1 to 65535") from exc
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions", "/models"):
        path = path.removesuffix(suffix)
    if not path.endswith("/v1"):
        path = path + "/v1"
    url = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    _check_url(url, endpoint)
    return url


def _check_url(url: str, endpoint: str) -> None:
    """UsageError unless the HTTP stack can ask `url` (it refuses a control character, a space
    in the host, a malformed port) before a request is built."""
    import httpx2

    try:
        httpx2.URL(url)
    except httpx2.InvalidURL as exc:
        why = str(exc).rstrip(".")
        raise UsageError(
            f"--endpoint {endpoint!r}: {why}; pass e.g. http://127.0.0.1:8000/v1"
        ) from exc


@dataclass(frozen=True)
class ApiKey:
    """The API key to send, and where it came from (named in error hints, never stored)."""

    value: str | None = field(default=None, repr=False)
    source: str | None = None  # "--api-key-env VAR" | "OPENAI_API_KEY"; None: no key

    def refused_hint(self) -> str:
        """What to do after a 401/403, naming what the user actually set."""
        if self.source:
            return f"the key from {self.source} was refused: check that it is valid for this server"
        return "no API key was sent: export OPENAI_API_KEY, or pass --api-key-env VAR"


def resolve_api_key(api_key_env: str | None, environ: Mapping[str, str] | None = None) -> ApiKey:
    """--api-key-env VAR wins, else OPENAI_API_KEY, else no key; UsageError when VAR is empty."""
    env = os.environ if environ is None else environ
    if api_key_env:
        value = env.get(api_key_env)
        if not value:
            raise UsageError(
                f"environment variable {api_key_env} is empty or unset; "
                "export the API key there or drop --api-key-env"
            )
        return ApiKey(value, f"--api-key-env {api_key_env}")
    if env.get("OPENAI_API_KEY"):
        return ApiKey(env["OPENAI_API_KEY"], "OPENAI_API_KEY")
    return ApiKey()

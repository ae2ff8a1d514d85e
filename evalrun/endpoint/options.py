"""Request options: the sampling and body fields sent with every chat request of a run.

The same thing three ways: CLI flags (`--temperature`, `--top-p`, `--request-seed`, `--max-tokens-scale`,
`--extra-body JSON|@file.yaml`, `--header K:V`), a contract's `request:` block (known sampling keys
are lifted out of it, the rest is extra body), and the Python API. Defaults are deterministic
(temperature 0). run.json records them (header values redacted), and compare/signoff warn when two
runs were sent different options.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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

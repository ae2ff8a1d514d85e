"""One score, as options: `ScoreOptions` is what `evalrun score`'s flags and `evalrun.score()`'s
keywords both build, with one set of defaults: what was asked, as given. The plan
(scoring/plan.py) settles it (the target spec, the selection, the limits); `scoring.run.score`
plans and runs it.

The field names are the flags' (`--request-seed` is `request_seed`, `--category` is
`categories`); lists may be given as tuples or comma-separated text, headers as `K:V` strings or a
mapping, the extra body as a mapping or the flag's JSON / @file text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

Names = tuple[str, ...] | str | None
# A repeatable flag's spelling -> its field (`--category` -> categories)
_SPELLED = {
    "category": "categories",
    "name": "label",
    "set": "sets",
    "unset": "unsets",
    "header": "headers",
}


@dataclass(frozen=True)
class ScoreOptions:
    """Everything one score takes, named as `evalrun score`'s flags."""

    # what to measure
    endpoint: str | None = None  # default: $OPENAI_BASE_URL (or the resumed run's)
    model: str | None = None  # default: the one /v1/models lists
    contract: str | Path | None = None  # boot the server this contract describes
    reference: bool = False  # boot the embedded reference endpoint
    sets: tuple[str, ...] = ()  # K=V contract overrides
    unsets: tuple[str, ...] = ()  # contract keys removed
    # connection
    api_key: str | None = field(default=None, repr=False)  # the API only: never stored
    api_key_env: str | None = None  # default: $OPENAI_API_KEY when set
    ca_bundle: str | None = None
    insecure: bool = False
    max_response_mb: float = 8.0
    # request options
    temperature: float | None = None
    top_p: float | None = None
    request_seed: int | None = None
    max_tokens_scale: float | None = None
    extra_body: Mapping[str, Any] | str | None = None  # a mapping, JSON text or @file
    headers: tuple[str, ...] | Mapping[str, str] = ()  # K:V strings or a mapping
    top_logprobs: int | None = None  # alternatives per token with logprobs (default 5)
    no_logprobs: bool = False  # ask for no logprobs: no tokens for fidelity
    logprob_tokens: int | None = None  # tokens kept per answer (default 128)
    # the run
    suite: str | None = None  # default: core (or the resumed run's)
    concurrency: int | None = None  # default 16; with the reference, its slots (`parallel`)
    timeout: float | None = None  # an item's whole budget, seconds; 120; 600 with the reference
    label: str | None = None  # default: a slug of the model or contract name
    results: str | Path = "results"
    limit: int | None = None  # N items drawn from every category in proportion
    seed: int = 0  # of the --limit draw
    items: Names = None
    categories: Names = None
    tags: Names = None
    repeats: int = 1
    resume: str | None = None  # a run id (or `latest`) to finish
    progress: bool = False  # a progress bar on stderr
    junit: str | Path | None = None  # also write the run as JUnit XML here

    @classmethod
    def given(cls, endpoint: str | None, kw: dict[str, Any]) -> ScoreOptions:
        """What `evalrun.score(endpoint, **kw)` was given: `options=` a ready ScoreOptions, or
        keywords (`from_keywords`); TypeError for both at once or for anything else."""
        ready = kw.pop("options", None)
        if ready is None:
            return cls.from_keywords(endpoint=endpoint, **kw)
        if kw or endpoint is not None:
            raise TypeError("pass either options= or keyword arguments, not both")
        if not isinstance(ready, ScoreOptions):
            raise TypeError(f"options= takes a ScoreOptions, not {type(ready).__name__}")
        return ready

    @classmethod
    def from_keywords(cls, **kw: Any) -> ScoreOptions:
        """Options from keywords: the fields, or the flags' own spellings (`category=`, `name=`,
        `set=`, `unset=`, `header=`, `deterministic=`); TypeError naming an unknown one and the known ones."""
        deterministic = kw.pop("deterministic", None)
        for flag, name in _SPELLED.items():
            if flag in kw:
                if name in kw:
                    raise TypeError(f"pass {name}= or {flag}=, not both")
                kw[name] = kw.pop(flag)
        if deterministic:  # --deterministic is --set deterministic=true
            kw["sets"] = (*(kw.get("sets") or ()), "deterministic=true")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kw) - known)
        if unknown:
            raise TypeError(
                f"unknown score option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        return cls(**kw)

    @property
    def booted(self) -> bool:
        return bool(self.contract or self.reference)

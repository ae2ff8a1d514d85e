"""A sign-off policy: the rules (YAML), their defaults, and the Check each rule produces."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalrun.base.errors import ConfigError, UsageError
from evalrun.slope.record import parse_depth


class SlopeRule(BaseModel):
    """The sign-off policy's optional `slope:` rule, checked on a slope run pair."""

    model_config = ConfigDict(extra="forbid")

    max_decode_drop: float = Field(
        default=0.10,
        ge=0,
        le=1,
        description="Share of the baseline's per-stream decode t/s the candidate may lose at a "
        "checked point (0.10 = 10%).",
    )
    depths: list[int] | None = Field(
        default=None,
        description="Depths to check (0, 8k, 128K, 131072); default: every depth "
        "the baseline measured.",
    )
    concurrency: list[int] | None = Field(
        default=None,
        description="Concurrency levels to check; default: every level the baseline measured.",
    )
    min_ratio_to_d0: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Also fail where the candidate's decode falls below this share of its own "
        "d0 (the long-context cliff), whatever the baseline did.",
    )

    @field_validator("depths", mode="before")
    @classmethod
    def _parse_depths(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        try:
            return [parse_depth(str(v)) for v in value]
        except UsageError as exc:
            raise ValueError(exc.message) from exc


class Policy(BaseModel):
    """A sign-off policy (YAML). Every field has a default; an unknown key is an error."""

    model_config = ConfigDict(extra="forbid")

    max_total_drop: float = Field(
        default=2.0, ge=0, description="Score points the candidate may lose on the whole suite."
    )
    max_category_drop: float = Field(
        default=10.0, ge=0, description="Score points the candidate may lose in any one category."
    )
    alpha: float = Field(
        default=0.05,
        gt=0,
        le=1,
        description="Family-wise error rate: a drop (or garble increase) beyond its limit blocks "
        "only if its one-sided exact p, Holm-adjusted over the whole family (total, every "
        "category, garble), is below alpha.",
    )
    collapse_points: float = Field(
        default=40.0,
        ge=0,
        description="A category losing at least this many points (and collapse_items items) "
        "blocks without a test: a test on 8-22 items cannot reach significance after the "
        "family's correction.",
    )
    collapse_items: int = Field(
        default=4, ge=1, description="Items a category must lose for the collapse rule."
    )
    max_garble_increase: float = Field(
        default=0.02,
        ge=0,
        le=1,
        description="How much the candidate's garble rate may exceed the baseline's on the items "
        "answered in both runs; beyond it, blocks when the increase is significant (in the "
        "family).",
    )
    max_garble_rate: float = Field(
        default=0.10,
        ge=0,
        le=1,
        description="Absolute ceiling: largest share of the candidate's answered items flagged "
        "as garbled, whatever the baseline did (a plainly broken lane).",
    )
    max_errors: int = Field(default=0, ge=0, description="Most items whose request may fail.")
    fatal_diagnoses: list[str] = Field(
        default_factory=lambda: [
            "reasoning_only",
            "tool_choice_400",
            "think_in_content",
            "empty_response",
            "model_not_found",
        ],
        description="Diagnosis kinds that fail the candidate if any item shows them.",
    )
    allow_incomplete: bool = Field(
        default=False,
        description="Let a candidate with errored or unrun items (or not status complete) pass.",
    )
    fidelity: Literal["report", "fail"] = Field(
        default="report",
        description="The candidate's tokens judged against the baseline's (compare/fidelity.py): "
        "`report` shows the verdict (a new engine version may move tokens), `fail` blocks a "
        "divergent candidate, and one whose tokens cannot be judged (no logprobs).",
    )
    fidelity_blocks: list[Literal["divergent", "numerically different"]] = Field(
        default=["divergent"],
        description="With a measured floor (--floor: the baseline's A/A partner), the grades "
        "that fail the candidate; a grade outside the noise that is not listed warns.",
    )
    slope: SlopeRule | None = Field(
        default=None,
        description="Decode-slope rule, checked on the slope runs named by --slope-baseline and "
        "--slope-candidate (evalrun.slope.record.slope_checks).",
    )


DEFAULT_POLICY_YAML = """\
# evalrun signoff policy. Every key is optional; these are the defaults.
# A drop blocks only when it exceeds its limit AND its one-sided exact paired test, Holm-adjusted
# over the whole family (total, every category, garble), has p < alpha: identical lanes are
# blocked at most alpha of the time however noisy they are (bench/signoff_calibration.py).
# Set alpha: 1 to let the limits alone decide.
max_total_drop: 2.0        # score points the candidate may lose on the whole suite
max_category_drop: 10.0    # score points it may lose in any one category
alpha: 0.05                # family-wise error rate for "the drop is real"
collapse_points: 40.0      # a category losing this many points ...
collapse_items: 4          # ... and this many items blocks without a test
max_garble_increase: 0.02  # garble rate the candidate may add over the baseline (paired items)
max_garble_rate: 0.10      # absolute ceiling on the candidate's garble rate
max_errors: 0              # items whose request may fail (timeouts, 5xx, ...)
fatal_diagnoses:           # any item showing one of these fails the candidate
  - reasoning_only
  - tool_choice_400
  - think_in_content
  - empty_response
  - model_not_found
allow_incomplete: false    # a candidate with errored / unrun items, or not complete, fails
fidelity: report           # the candidate's tokens against the baseline's; `fail`: divergent blocks
fidelity_blocks:           # with --floor (the baseline's A/A partner): grades that block
  - divergent              # `numerically different` (outside the noise, not a fault) warns
# slope:                   # optional, on the slope runs named by --slope-baseline/--slope-candidate
#   max_decode_drop: 0.10  # share of the baseline's decode t/s the candidate may lose per point
#   depths: [0, 32k, 128K] # default: every depth the baseline measured
#   concurrency: [1, 2]    # default: every level the baseline measured
#   min_ratio_to_d0: 0.5   # also fail below this share of the candidate's own d0 (a cliff)
"""


class Check(BaseModel):
    """One rule applied to the pair of runs."""

    model_config = ConfigDict(extra="forbid")

    rule: str = Field(description="total_drop, category_drop, garble_rate, errors, ...")
    subject: str = Field(default="", description="The category, diagnosis kind, ... if any.")
    outcome: Literal["pass", "fail", "warn"]
    reason: str = Field(description="One line in words: measured value against the limit.")
    p_value: float | None = Field(
        default=None, description="The rule's one-sided exact p, when it is a tested rule."
    )
    p_adjusted: float | None = Field(
        default=None, description="p_value, Holm-adjusted over the policy's family."
    )


def load_policy(path: Path | str | None) -> Policy:
    """The policy from a YAML file, or the documented default when `path` is None."""
    if path is None:
        return Policy()
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read policy {path} ({exc.strerror}); check the path") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"policy {path} is not valid YAML ({exc}); fix the file") from exc
    if data is None:
        return Policy()
    if not isinstance(data, dict):
        raise ConfigError(
            f"policy {path} must be a mapping of keys; see `evalrun signoff --print-policy`"
        )
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        raise ConfigError(
            f"policy {path}: {where}: {err['msg']}; see `evalrun signoff --print-policy`"
        ) from exc

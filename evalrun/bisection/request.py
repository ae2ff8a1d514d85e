"""What `evalrun bisect` was asked (`BisectRequest`), validated before any boot, and the outcome
kinds a trial can have (`--fail-on` names them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evalrun.base.errors import UsageError

Mode = Literal["knob", "contracts", "git", "ordered"]
Kind = Literal["ok", "garble", "divergent", "different", "regressed", "broken", "boot_fail"]
KINDS: tuple[str, ...] = (
    "ok",
    "garble",
    "divergent",
    "different",
    "regressed",
    "broken",
    "boot_fail",
)
DEFAULT_FAIL_ON = frozenset({"garble", "divergent", "different", "regressed", "broken"})

FAIL_ON_NAMES = {
    "garble": "garble",
    "regressed": "regressed",
    "broken": "broken",
    "boot": "boot_fail",
    "boot_fail": "boot_fail",
    "divergent": "divergent",
    "different": "different",
}


def parse_fail_on(text: str) -> frozenset[str]:
    """`garble,regressed,broken,boot` -> outcome kinds; UsageError on unknown names."""
    out = set()
    for word in (w.strip() for w in text.split(",") if w.strip()):
        if word not in FAIL_ON_NAMES:
            raise UsageError(
                f"--fail-on {word!r}: use a comma list of garble, divergent, different, regressed, "
                "broken, boot"
            )
        out.add(FAIL_ON_NAMES[word])
    if not out:
        raise UsageError(
            "--fail-on needs at least one of garble, divergent, different, regressed, broken, boot"
        )
    return frozenset(out)


class BisectRequest(BaseModel):
    """Everything `evalrun bisect` was asked, validated before any boot."""

    model_config = ConfigDict(extra="forbid")

    contract: str | None = Field(
        default=None, description="Knob mode: the contract; git: its path."
    )
    knob: str | None = Field(default=None, description="Knob mode: the knob to vary.")
    values: list[str] | None = Field(
        default=None, description="Knob mode: values (`none` removes)."
    )
    good: str | None = Field(default=None, description="Good contract file, or good revision.")
    bad: str | None = Field(default=None, description="Bad contract file, or bad revision.")
    repo: str | None = Field(default=None, description="Git mode: the repository.")
    all_commits: bool = False
    sets: list[str] = Field(default_factory=list, description="--set K=V on every variant.")
    unsets: list[str] = Field(default_factory=list, description="--unset K on every variant.")
    suite: str = "core"
    results: str = "results"
    fail_on: str = ",".join(k for k in KINDS if k in DEFAULT_FAIL_ON)
    floor_boots: int = Field(
        default=1, ge=1, le=2, description="Boots of the good side its noise floor is measured on."
    )
    floor_sets: list[str] = Field(
        default_factory=list,
        description="--floor-knob K=V: the good side's floor boot runs with these (a harmless "
        "knob that batches), so its floor holds that change of numerics too.",
    )
    garble_rate: float = Field(default=0.25, gt=0, le=1)
    min_score: int | None = None
    tries: int = Field(default=1, ge=1)
    vote: Literal["any", "majority"] = "any"
    full: bool = False
    burst: int = Field(default=8, ge=0, description="Copies of probe items sent at once.")
    use_cache: bool = True
    verify: bool = True
    lanes: int = Field(default=1, ge=1, description="Trials run at once: a pool of k lanes.")
    ordered: bool = Field(default=False, description="The values are in order: halve, not try all.")
    versions: str | None = Field(
        default=None, description="Ordered mode over releases: NAME>=LOW,<=HIGH from the index."
    )

    def mode(self) -> Mode:
        """Which mode the flags ask for; UsageError when they mix or miss."""
        if self.ordered or self.versions:
            if not self.contract or self.good or self.bad or self.repo:
                raise UsageError(
                    "ordered mode is --contract FILE --knob KNOB --values v1,...,vN --ordered "
                    "(or --knob engine --versions 'NAME>=LOW,<=HIGH')"
                )
            return "ordered"
        if self.repo:
            if not (self.good and self.bad and self.contract):
                raise UsageError("git mode needs --repo DIR --good REV --bad REV --contract PATH")
            if self.knob:
                raise UsageError("--knob does not combine with --repo")
            return "git"
        if self.knob:
            if not self.contract or self.good or self.bad:
                raise UsageError("one-knob mode is --contract FILE --knob KNOB [--values v1,v2]")
            return "knob"
        if self.good and self.bad:
            if self.contract:
                raise UsageError("--good/--bad contracts do not take --contract (that is git mode)")
            return "contracts"
        raise UsageError(
            "pick a mode: --contract F --knob K | --good F --bad F | "
            "--repo DIR --good REV --bad REV --contract PATH"
        )

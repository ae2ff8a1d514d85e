"""Garble detector. (Stub interface: the garble work replaces the bodies, not the signatures.)"""

from __future__ import annotations

from pydantic import BaseModel, Field

from evalrun.response import Response


class GarbleVerdict(BaseModel):
    garbled: bool
    score: float = Field(description="0 clean .. 1 certainly garbled")
    reasons: list[str] = Field(default_factory=list)


def detect(text: str, expect: list[str] | None = None) -> GarbleVerdict:
    """Judge one text; `expect` lists languages/scripts the answer may use."""
    return GarbleVerdict(garbled=False, score=0.0)


def check_response(response: Response, expect: list[str] | None = None) -> dict | None:
    """Verdict for content and reasoning channels: {garbled, score, reasons, channel} or None."""
    return None

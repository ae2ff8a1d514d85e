"""The probe a tick sends, chosen once from the anchor run.

- *Border* items: the ones whose anchor tokens sit closest to a tie early on (the smallest gap
  between the chosen token and its best alternative over the first `EARLY` tokens). A change
  in the numbers shows there first: the logprobs of a near tie move, and a tie flips.
- *Garble* probes: the suite's exact-copy canaries (tag `copy`, else category `canary`), the
  first thing to break when weights or the KV cache go wrong.

Items of the anchor that did not answer, or answered without tokens, cannot be compared and are
never chosen; long-context items and items allowed more than `MAX_TOKENS` tokens are left for
the escalation, so a tick stays a few seconds. The whole probe goes out at once (a burst: the
server batches the requests, as it does under load). Pure but for nothing: it reads what the
caller loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from evalrun.endpoint.logprobs import TokenTrace, TopK
from evalrun.store import ItemRecord

EARLY = 8  # tokens of an answer in which a near tie counts
MAX_TOKENS = 128  # items allowed more than this are too dear for a tick
SLOW_CATEGORIES = frozenset({"long-context"})


class Probe(BaseModel):
    """The items a tick sends, and why each was chosen."""

    model_config = ConfigDict(extra="forbid")

    border: list[str] = Field(description="Items closest to a tie early on, nearest first.")
    garble: list[str] = Field(description="Exact-copy canaries.")
    margins: dict[str, float] = Field(
        default_factory=dict, description="Each border item's smallest early logprob gap (nats)."
    )

    @property
    def ids(self) -> list[str]:
        return [*self.border, *self.garble]


def early_margin(trace: TokenTrace, early: int = EARLY) -> float | None:
    """The smallest gap between the best and second-best logprob over the first `early`
    positions (None: no position had an alternative)."""
    gaps = []
    for token in trace.tokens[:early]:
        alts = sorted(TopK(token).values(), reverse=True)
        if len(alts) > 1:
            gaps.append(alts[0] - alts[1])
    return min(gaps) if gaps else None


def _cheap(item: ItemRecord) -> bool:
    limit = item.request.get("max_tokens")
    small = not isinstance(limit, int) or limit <= MAX_TOKENS
    return small and item.category not in SLOW_CATEGORIES


def choose_probe(
    items: Sequence[ItemRecord],
    traces: dict[str, TokenTrace],
    tags: Mapping[str, Sequence[str]],
    *,
    border: int = 6,
    garble: int = 2,
) -> Probe:
    """The probe from an anchor's items and traces; `tags` maps item id to its suite tags."""
    usable = [r for r in items if r.response is not None and r.id in traces and _cheap(r)]
    copies = [r for r in usable if "copy" in tags.get(r.id, ())]
    if not copies:
        copies = [r for r in usable if r.category == "canary"]
    copies.sort(key=lambda r: (traces[r.id].total, r.id))
    chosen_garble = [r.id for r in copies[:garble]]
    margins: dict[str, float] = {}
    for r in usable:
        if r.id in chosen_garble:
            continue
        m = early_margin(traces[r.id])
        if m is not None:
            margins[r.id] = round(m, 4)
    nearest = sorted(margins, key=lambda i: (margins[i], i))[:border]
    return Probe(border=nearest, garble=chosen_garble, margins={i: margins[i] for i in nearest})

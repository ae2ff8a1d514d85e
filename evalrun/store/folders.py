"""Run ids and run folders: one way to name a run and to claim its folder."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from evalrun.base.errors import ConfigError


def now_iso() -> str:
    """Local time, ISO 8601 with offset, to the second."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


def slug(text: str) -> str:
    """A filesystem-safe label: model 'org/Model-7B' -> 'Model-7B'."""
    text = text.rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "run"


def new_run_id(label: str, when: datetime | None = None) -> str:
    """YYYY-MM-DD_HHMMSS_<label>."""
    when = when or datetime.now()
    return f"{when:%Y-%m-%d_%H%M%S}_{slug(label)}"


def claim_folder(root: Path, name: str) -> Path:
    """Create and return a new folder `root/name`, or `name-2`, `name-3`, ... when taken.

    The one way a run (score, slope, bisect) gets its folder: mkdir without exist_ok is atomic,
    so two runs started in the same second never share one.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
        for n in range(1, 1000):
            folder = root / (name if n == 1 else f"{name}-{n}")
            try:
                folder.mkdir()
                return folder
            except FileExistsError:
                continue
    except OSError as exc:
        raise ConfigError(
            f"cannot create a folder in {root} ({exc.strerror}); "
            "pass --results DIR with a writable folder"
        ) from exc
    raise ConfigError(f"{root} holds 999 folders named {name}; clean up old runs")

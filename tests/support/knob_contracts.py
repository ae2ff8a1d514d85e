"""Contracts for the fake knob engine (tests/fake_engines/knobs.py), which bisect boots: the
bisect-lane tests and bench/bisect_lanes.py write the same ones."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ENGINE = Path(__file__).resolve().parents[1] / "fake_engines" / "knobs.py"
KNOBS = [f"knob-{i}" for i in range(1, 8)]


def write_contract(
    folder: Path,
    name: str,
    args: dict,
    launch: dict | None = None,
    *,
    engine: Path = ENGINE,
    command: list[str] | None = None,
) -> str:
    """folder/<name>.yaml: a contract that boots the fake `engine` script with `args` (or
    `command`: the engine as a container image holds it)."""
    data = {
        "name": name,
        "engine": "other",
        "command": command or [sys.executable, str(engine)],
        "model": "m",
        "port": 0,
        "health": "/v1/models",
        "boot_timeout": 60,
        "args": args,
    }
    if launch:
        data["launch"] = launch
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def eight_knobs(
    folder: Path, launch: dict | None = None, command: list[str] | None = None
) -> tuple[str, str]:
    """good and bad contracts differing in 8 knobs; load-format=instanttensor is the culprit."""
    good = write_contract(folder, "good", {"load-format": "safetensors"}, launch, command=command)
    bad_args = {k: "on" for k in KNOBS[:4]} | {"load-format": "instanttensor"}
    bad_args |= {k: "on" for k in KNOBS[4:]}
    return good, write_contract(folder, "bad", bad_args, launch, command=command)

"""Fake engine builds: wheels `fake-engine==N` of tests/fake_engines/releases.py with RELEASE=N and
a `fake-engine` console script, made here by hand (a wheel is a zip), installed offline from a
find-links folder: evalrun's engine builds, real venvs and real installs, in about a second each
with uv."""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

import yaml

ENGINE = Path(__file__).resolve().parents[1] / "fake_engines" / "releases.py"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(folder: Path, release: int | str, requires: list[str] | None = None) -> Path:
    """folder/fake_engine-<release>-py3-none-any.whl, depending on `requires`."""
    source = ENGINE.read_text(encoding="utf-8").replace('RELEASE = "1"', f'RELEASE = "{release}"')
    files = {
        "fake_engine/__init__.py": source.encode(),
        f"fake_engine-{release}.dist-info/entry_points.txt": (
            b"[console_scripts]\nfake-engine = fake_engine:main\n"
        ),
    }
    return write_wheel(folder, "fake-engine", str(release), files, requires or [])


def write_wheel(
    folder: Path, name: str, version: str, files: dict[str, bytes], requires: list[str]
) -> Path:
    """folder/<name>-<version>-py3-none-any.whl holding `files` (a dep: none needed)."""
    stem = f"{name.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    files = dict(files) or {f"{name.replace('-', '_')}/__init__.py": b""}
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files[f"{info}/METADATA"] = (meta + "".join(f"Requires-Dist: {r}\n" for r in requires)).encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: evalrun-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in files.items():
            zf.writestr(member, data)
    return path


def offline_index(monkeypatch, tmp_path: Path, releases: list[int]) -> Path:
    """Wheels for `releases` in a find-links folder, installs made offline from it only, and
    builds and uv's cache under tmp_path."""
    wheels = tmp_path / "wheels"
    for n in releases:
        make_wheel(wheels, n)
    monkeypatch.setenv("EVALRUN_BUILDS_DIR", str(tmp_path / "builds"))
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_CONSTRAINT", "")
    monkeypatch.setenv("UV_NO_INDEX", "1")
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    return wheels


def release_contract(
    folder: Path,
    *,
    bad_from: int,
    build: str | None = None,
    crash_at: str = "",
    flaky_at: str = "",
    release: int = 1,
) -> str:
    """folder/releases.yaml: the fake release engine, from a build (`fake-engine==N`) or as a
    script with `--release` as the knob."""
    args = {"bad-from": str(bad_from), "crash-at": crash_at, "flaky-at": flaky_at}
    data: dict = {
        "name": "releases",
        "engine": "other",
        "model": "m",
        "port": 0,
        "health": "/v1/models",
        "boot_timeout": 60,
        "args": {k: v for k, v in args.items() if v},
    }
    if build:
        data["command"] = ["fake-engine"]
        data["engine_build"] = {"pip": build}
    else:
        data["command"] = [sys.executable, str(ENGINE)]
        data["args"]["release"] = str(release)
    path = folder / "releases.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)

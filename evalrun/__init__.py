"""evalrun: a quality gate for self-hosted LLM serving contracts.

`evalrun.score(...)` and `await evalrun.ascore(...)` are the Python API (evalrun/api.py), their
keywords those of `evalrun.ScoreOptions`. They are
loaded on first use, so `import evalrun` (and `evalrun --help`) stays fast; the import-layer
contract sees no arrow from here up to api.py, by design.
"""

from __future__ import annotations

from typing import Any

from evalrun.base.version import __version__

__all__ = ["ScoreOptions", "__version__", "ascore", "score"]


def __getattr__(name: str) -> Any:
    if name in ("score", "ascore", "ScoreOptions"):
        import importlib

        return getattr(importlib.import_module("evalrun.api"), name)
    raise AttributeError(f"module 'evalrun' has no attribute {name!r}")

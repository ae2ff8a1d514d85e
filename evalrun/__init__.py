"""evalrun: a quality gate for self-hosted LLM serving contracts."""

__version__ = "0.1.0"

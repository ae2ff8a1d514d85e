"""Test support code shared by several test modules (fixtures that are not pytest fixtures)."""

"""dtypefix command line."""

__version__ = "0.1.0"
"""The package version (pyproject.toml reads it from here; reading it needs no importlib.metadata)."""

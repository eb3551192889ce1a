"""The version, in one place; kept in step with pyproject.toml by a test."""

__version__ = "0.2.0"

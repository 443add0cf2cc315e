"""The headless coding agent of Apex Code: tools, sessions, settings, modes and the SDK."""

__version__ = "0.1.0"

__all__ = ["__version__"]

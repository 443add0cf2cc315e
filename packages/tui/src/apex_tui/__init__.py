"""The urwid fullscreen interactive front end of Apex Code."""

__version__ = "0.1.0"

__all__ = ["__version__"]

"""The provider layer of Apex Code: messages, models and streaming from model APIs."""

__version__ = "0.1.0"

__all__ = ["__version__"]

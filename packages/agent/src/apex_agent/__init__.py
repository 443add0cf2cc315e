"""The agent layer of Apex Code: the loop that turns prompts into model turns and tool runs."""

__version__ = "0.1.0"

__all__ = ["__version__"]

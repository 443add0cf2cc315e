"""`McpCallError`, apart from the connection code so that catching it never imports the `mcp` SDK."""

from __future__ import annotations


class McpCallError(Exception):
    """A call that could not be made or did not finish (server down, crashed mid-call, timed out)."""


__all__ = ["McpCallError"]

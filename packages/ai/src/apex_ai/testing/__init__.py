"""Test support shipped with the package, so every layer's suite uses the same helpers.

- `block_network()` (here): tests reach only loopback addresses.
- `apex_ai.testing.scripted_server`: a local HTTP server speaking the Anthropic and OpenAI wire protocols
  from a script of replies (`python -m apex_ai.testing.scripted_server --scenario FILE`).

The scripted in-process `faux` provider is not test-only: it stays a public provider (`apex_ai.providers.faux`).
"""

from apex_ai.testing.network import NetworkBlockedError, block_network

__all__ = ["NetworkBlockedError", "block_network"]

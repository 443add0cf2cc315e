"""The network guard every layer's test suite uses.

`block_network()` makes any connection to a non-loopback address fail: tests talk to mock
transports or to servers they start on 127.0.0.1, never to a real model API.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class NetworkBlockedError(OSError):
    """A test tried to reach a non-loopback address."""


def _is_loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX paths
        return True
    host = address[0] if isinstance(address, tuple) and address else address
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def block_network() -> Iterator[None]:
    """Within the block, `socket.connect` to anything but loopback raises `NetworkBlockedError`."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if not _is_loopback(address):
            raise NetworkBlockedError(f"network access blocked in tests: {address!r}")
        original_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if not _is_loopback(address):
            raise NetworkBlockedError(f"network access blocked in tests: {address!r}")
        return original_connect_ex(self, address)

    # setattr: patching a C type's methods is exactly what the type stubs are right to forbid.
    setattr(socket.socket, "connect", guarded_connect)  # noqa: B010
    setattr(socket.socket, "connect_ex", guarded_connect_ex)  # noqa: B010
    try:
        yield
    finally:
        setattr(socket.socket, "connect", original_connect)  # noqa: B010
        setattr(socket.socket, "connect_ex", original_connect_ex)  # noqa: B010


__all__ = ["NetworkBlockedError", "block_network"]

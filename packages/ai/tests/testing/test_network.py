import socket

import pytest

from apex_ai.testing import NetworkBlockedError


def test_non_loopback_connections_are_blocked() -> None:
    with socket.socket() as sock, pytest.raises(NetworkBlockedError):
        sock.connect(("93.184.216.34", 443))


def test_loopback_connections_are_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=2) as client:
            assert client.getpeername() == server.getsockname()

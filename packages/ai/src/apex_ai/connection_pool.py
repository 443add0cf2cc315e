"""Keep-alive HTTP connections shared by the requests of one owner (an agent session, say).

Each request still gets its own SDK client, but without a pool each SDK client also builds its
own HTTP client: a new TLS context (~23 ms of CPU: the CA bundle is parsed again) and a new TCP + TLS handshake
to the provider on every turn of an agent run. With `StreamOptions.connection_pool` set, the SDK clients of
all requests share one `httpx2.AsyncClient`, so later turns reuse warm connections.

The pool belongs to whoever made it: `aclose()` ends its connections. An HTTP client is tied to the event loop
that first used it; a request from another loop gets a fresh client (the old one's connections cannot be
closed from there and are left to the interpreter).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # httpx2 costs ~135 ms to import; the pool imports it when the first request needs it.
    import httpx2

MAX_CONNECTIONS = 1000
MAX_KEEPALIVE_CONNECTIONS = 100
"""The provider SDKs' own defaults: a pool must not limit an agent more than a client per request did."""


def _keepalive_socket_options() -> list[tuple[int, int, int | bool]]:
    """TCP keep-alive probes after 60 s idle, every 60 s, 5 tries: a streamed answer that pauses for minutes
    (a long thinking phase) keeps its connection through NAT gateways and load balancers, as with the SDKs'
    default clients."""
    options: list[tuple[int, int, int | bool]] = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, True)]
    interval = getattr(socket, "TCP_KEEPINTVL", None)
    if interval is not None:
        options.append((socket.IPPROTO_TCP, interval, 60))
    elif sys.platform == "darwin":
        options.append((socket.IPPROTO_TCP, getattr(socket, "TCP_KEEPALIVE", 0x10), 60))
    for name, value in (("TCP_KEEPCNT", 5), ("TCP_KEEPIDLE", 60)):
        option = getattr(socket, name, None)
        if option is not None:
            options.append((socket.IPPROTO_TCP, option, value))
    return options


def new_http_client() -> httpx2.AsyncClient:
    """An HTTP client for SDK clients: redirects followed, the SDKs' connection limits, TCP keep-alive.

    Timeouts are not set here: every SDK client passes its own per request.
    """
    import httpx2

    limits = httpx2.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_KEEPALIVE_CONNECTIONS)
    transport = httpx2.AsyncHTTPTransport(limits=limits, socket_options=_keepalive_socket_options())
    return httpx2.AsyncClient(transport=transport, limits=limits, follow_redirects=True)


class ConnectionPool:
    """One lazily built `httpx2.AsyncClient` per owner; see the module docstring."""

    def __init__(self) -> None:
        self._client: httpx2.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def client(self) -> httpx2.AsyncClient | None:
        """The shared client for a request on the running loop; None once the pool is closed (the request then
        makes a client of its own, as without a pool)."""
        if self._closed:
            return None
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.is_closed or self._loop is not loop:
            self._client = new_http_client()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the connections (on the loop that opened them); later requests go without the pool."""
        self._closed = True
        client, self._client = self._client, None
        if client is None or client.is_closed:
            return
        try:
            same_loop = self._loop is asyncio.get_running_loop()
        except RuntimeError:
            same_loop = False
        if same_loop:
            await client.aclose()


__all__ = ["ConnectionPool", "new_http_client"]

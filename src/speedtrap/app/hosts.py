"""Only the host and port the app serves: a Host-header check against DNS rebinding.

The app listens on a loopback address by default, but a browser sends a request to it from any page
whose name an attacker points at 127.0.0.1 (DNS rebinding), with that name in the ``Host`` header.
:class:`HostCheck` is an ASGI middleware that answers such requests (and WebSocket handshakes) with
``421 Misdirected Request`` unless the header names the address the app was started on — for a
loopback address, any loopback name (``localhost``, ``127.0.0.1``, ``[::1]``) — and the port its
socket actually listens on (read from the connection, so ``--port 0`` works). An app bound to every
interface (``0.0.0.0`` or ``::``) is reachable by any name its machine has, so there only the port
is checked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["LOOPBACK_NAMES", "HostCheck", "allowed_names", "host_is_allowed"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""Names of this machine's loopback interface."""

WILDCARDS = frozenset({"0.0.0.0", "::", ""})
"""Addresses that bind every interface."""


def allowed_names(bind_host: str) -> frozenset[str] | None:
    """The host names a request may carry for an app bound to ``bind_host`` (None: any name)."""
    host = bind_host.strip().strip("[]").lower()
    if host in WILDCARDS:
        return None
    if host in LOOPBACK_NAMES:
        return LOOPBACK_NAMES
    return frozenset({host})


def split_host(header: str) -> tuple[str, int | None]:
    """``Host`` header → (lower-case name without brackets, port or None). A malformed port gives -1."""
    header = header.strip().lower()
    if header.startswith("["):  # [v6]:port
        name, _, rest = header[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else None
    elif header.count(":") == 1:
        name, _, port_text = header.partition(":")
    else:
        name, port_text = header, None
    if port_text is None:
        return name, None
    return name, int(port_text) if port_text.isdigit() else -1


def host_is_allowed(header: str | None, *, names: frozenset[str] | None, port: int | None) -> bool:
    """Whether a request with this ``Host`` header reaches an app serving ``names`` on ``port``
    (None: the listening port is unknown, so not checked). A request without the header is refused:
    every browser sends one."""
    if not header:
        return False
    name, given_port = split_host(header)
    if names is not None and name not in names:
        return False
    default = 80
    return port is None or (given_port if given_port is not None else default) == port


class HostCheck:
    """ASGI middleware: refuse HTTP requests and WebSocket handshakes whose ``Host`` header names
    another host or port (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, bind_host: str) -> None:
        self.app = app
        self.names = allowed_names(bind_host)

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        server = scope.get("server")
        port = int(server[1]) if server and server[1] is not None else None
        if host_is_allowed(headers.get("host"), names=self.names, port=port):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = b"misdirected request: this app answers only to the host and port it serves\n"
        await send(
            {
                "type": "http.response.start",
                "status": 421,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

"""The app's Host check (DNS rebinding): only the host and port it serves get through."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from speedtrap.app.hosts import HostCheck, allowed_names, host_is_allowed, split_host


def test_split_host() -> None:
    assert split_host("LocalHost:8765") == ("localhost", 8765)
    assert split_host("[::1]:80") == ("::1", 80)
    assert split_host("[::1]") == ("::1", None)
    assert split_host("example.org") == ("example.org", None)
    assert split_host("example.org:x") == ("example.org", -1)


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        ("127.0.0.1:8765", True),
        ("localhost:8765", True),
        ("[::1]:8765", True),
        ("evil.example:8765", False),
        ("evil.example", False),
        ("127.0.0.1:9999", False),
        ("127.0.0.1", False),  # port 80 implied
        ("localhost:8765.evil.example", False),
        (None, False),
        ("", False),
    ],
)
def test_loopback_app_answers_only_loopback_names_on_its_port(header: str | None, ok: bool) -> None:
    assert host_is_allowed(header, names=allowed_names("127.0.0.1"), port=8765) is ok


def test_named_and_wildcard_binds() -> None:
    names = allowed_names("dev.internal")
    assert host_is_allowed("dev.internal:80", names=names, port=80)
    assert not host_is_allowed("localhost:80", names=names, port=80)
    assert allowed_names("0.0.0.0") is None and allowed_names("::") is None
    assert host_is_allowed("anything.example:8000", names=None, port=8000)
    assert not host_is_allowed("anything.example:8001", names=None, port=8000)


def call(middleware: HostCheck, kind: str, host: str, port: int = 8765) -> tuple[list[dict[str, Any]], bool]:
    reached = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["type"])

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {}

    middleware.app = app
    scope = {"type": kind, "headers": [(b"host", host.encode())], "server": ("127.0.0.1", port)}
    asyncio.run(middleware(scope, receive, send))
    return sent, bool(reached)


def test_middleware_refuses_other_hosts_over_http_and_websocket() -> None:
    check = HostCheck(lambda *a: None, bind_host="localhost")  # type: ignore[arg-type,return-value]
    sent, reached = call(check, "http", "localhost:8765")
    assert reached and sent == []
    sent, reached = call(check, "http", "evil.example:8765")
    assert not reached and sent[0]["status"] == 421
    sent, reached = call(check, "websocket", "evil.example:8765")
    assert not reached and sent == [{"type": "websocket.close", "code": 1008}]
    sent, reached = call(check, "lifespan", "")  # not a request: passed through
    assert reached

"""Clients share one TLS context per process instead of loading a CA bundle for each."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from clients import AsyncCountdownClient, CountdownClient
from clients.tls import https_context, websocket_ssl
from tests.live import LiveServer


@pytest.fixture
def ca_loads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every CA bundle a TLS context loads from now on."""
    loads: list[Any] = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args or kwargs)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    return loads


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_twenty_clients_load_at_most_one_ca_bundle(
    countdown_server: LiveServer, ca_loads: list[Any], transport: str
) -> None:
    https_context.cache_clear()
    for _ in range(20):
        with CountdownClient.from_url(countdown_server.url, transport=transport) as env:
            env.reset(seed=1)
    assert len(ca_loads) <= 1


async def test_async_clients_share_the_context(
    countdown_server: LiveServer, ca_loads: list[Any]
) -> None:
    https_context.cache_clear()
    for transport in ("websocket", "http"):
        for _ in range(10):
            async with AsyncCountdownClient.from_url(
                countdown_server.url, transport=transport
            ) as env:
                await env.reset(seed=1)
    assert len(ca_loads) <= 1


def test_wss_urls_get_the_verifying_context_and_ws_urls_none() -> None:
    context = websocket_ssl("wss://user-game.hf.space/ws")
    assert context is not None and context.verify_mode == ssl.CERT_REQUIRED
    assert context is websocket_ssl("wss://other.example/ws")
    assert websocket_ssl("ws://127.0.0.1:8000/ws") is None
    assert https_context().verify_mode == ssl.CERT_REQUIRED and https_context().check_hostname

"""Links and client addresses are the service's own, not what a client claims."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from support import make_settings, start_server, stop_server


async def _access_line(caplog: pytest.LogCaptureFixture, tmp_path: Path, trusted: str) -> str:
    server = await start_server(make_settings(tmp_path, trusted_proxies=trusted))
    try:
        with caplog.at_level(logging.INFO, logger="ctiwire.access"):
            async with server.client(server.pro_key) as http:
                await http.get("/api/v1/iocs", params={"limit": 1},
                               headers={"X-Real-IP": "203.0.113.77", "X-Forwarded-For": "203.0.113.77"})
    finally:
        await stop_server(server)
    return next(r.getMessage() for r in caplog.records if r.name == "ctiwire.access" and "/api/v1/iocs" in
                r.getMessage())


async def test_forwarded_headers_only_from_trusted_proxies(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    untrusted = await _access_line(caplog, tmp_path / "a", "")
    assert "client=127.0.0.1" in untrusted and "203.0.113.77" not in untrusted
    assert re.search(r"key=\S{4} ?", untrusted) and "sk_live_" not in untrusted  # 4 characters, never the key
    caplog.clear()
    trusted = await _access_line(caplog, tmp_path / "b", "127.0.0.0/8, ::1")
    assert "client=203.0.113.77" in trusted


async def test_links_never_come_from_the_host_header(tmp_path: Path) -> None:
    server = await start_server(make_settings(tmp_path))
    try:
        async with server.client(server.pro_key) as http:
            spoofed = await http.get("/api/v1/articles", params={"limit": 1}, headers={"Host": "evil.example"})
    finally:
        await stop_server(server)
    assert "evil.example" not in spoofed.text and spoofed.json()["links"]["self"].startswith(server.url)
    public = await start_server(make_settings(tmp_path / "p", public_url="https://cti.example/"))
    try:
        async with public.client(public.pro_key) as http:
            links = (await http.get("/api/v1/articles", params={"limit": 1})).json()["links"]
    finally:
        await stop_server(public)
    assert links["self"].startswith("https://cti.example/api/v1/articles?")

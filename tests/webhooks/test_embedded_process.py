"""The embedded mode delivers webhooks inside ``ctiwire serve``: a webhook created through the API of a real
server process receives, signed and in order, the events another process appends to the SQLite log."""

from __future__ import annotations

import asyncio

import httpx
import orjson
import pytest
from support import cli_env, ctiwire, spawn_server
from webhook_support import Receiver, start_receiver, stop_receiver

from store.ports.events import NewEvent
from store.sqlite import sqlite_stores

pytestmark = pytest.mark.slow  # a server process


async def test_the_embedded_server_delivers(tmp_path) -> None:
    data = tmp_path / "data"
    env = cli_env(data, CTIWIRE_WEBHOOK_ALLOW_PRIVATE="1", CTIWIRE_WEBHOOK_INTERVAL_SECONDS="0.2")
    ctiwire(env, "users", "create", "soc@test.local", "--tier", "pro")
    key = ctiwire(env, "keys", "create", "soc@test.local", "--name", "siem").strip().splitlines()[-1]
    server = spawn_server(env, "--no-seed")
    receiver = start_receiver(Receiver())
    try:
        async with httpx.AsyncClient(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as http:
            made = await http.post("/api/v1/webhooks", json={"url": receiver.url, "filters": {"kinds": "ioc"}})
        assert made.status_code == 201, made.text
        receiver.secret = made.json()["secret"]
        writer = sqlite_stores(data / "ctiwire.sqlite3")
        await writer.open()
        events = [NewEvent("article", b'{"title": "t"}')]
        events += [NewEvent("ioc", orjson.dumps({"value": f"192.0.2.{n}"})) for n in range(5)]
        ids = await writer.events.append(events)
        await writer.close()
        for _ in range(300):
            if len(receiver.acknowledged) >= 5:
                break
            await asyncio.sleep(0.1)
        assert [e["id"] for e in receiver.acknowledged] == [str(i) for i in ids[1:]]
        assert all(r["signed"] for r in receiver.requests)
    finally:
        await stop_receiver(receiver)
        server.stop()

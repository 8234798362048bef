"""/api/v1/webhooks through real HTTP on every backend: create (the secret shown once), list, read with
recent deliveries, pause and resume, delete; owner scope, filters checked by the stream's parser, the
plan's quota, and URLs of private addresses refused without CTIWIRE_WEBHOOK_ALLOW_PRIVATE."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from mongo_support import backend_stores, server_backends
from support import RunningServer, delivered_key, make_settings, start_server, stop_server
from webhook_support import Receiver, start_receiver, stop_receiver

from config import tiers
from store import accounts
from store.ports.events import NewEvent
from store.records import utcnow
from webhooks.delivery import Policy, deliver_due


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    started = start_receiver(Receiver())
    yield started
    await stop_receiver(started)


async def create(server: RunningServer, body: dict[str, object], key: str | None = None) -> dict[str, object]:
    async with server.client(key or server.pro_key) as http:
        response = await http.post("/api/v1/webhooks", json=body)
    assert response.status_code == 201, response.text
    assert response.headers["Location"] == f"/api/v1/webhooks/{response.json()['id']}"
    return dict(response.json())


async def test_create_list_read_pause_resume_delete(server: RunningServer, receiver: Receiver) -> None:
    made = await create(server, {"url": receiver.url, "filters": {"type": ["ipv4"], "kinds": "ioc"}})
    secret = str(made["secret"])
    assert secret.startswith("whsec_") and made["state"] == "active"
    assert made["filters"] == {"type": ["ipv4"], "kinds": ["ioc"]}
    async with server.client(server.pro_key) as http:
        listed = await http.get("/api/v1/webhooks")
        assert [h["id"] for h in listed.json()["data"]] == [made["id"]] and secret not in listed.text
        one = await http.get(f"/api/v1/webhooks/{made['id']}")
        assert one.json()["deliveries"] == [] and secret not in one.text
        paused = await http.patch(f"/api/v1/webhooks/{made['id']}", json={"paused": True})
        assert paused.json()["state"] == "paused"
        resumed = await http.patch(f"/api/v1/webhooks/{made['id']}", json={"paused": False})
        assert resumed.json()["state"] == "active"
        assert (await http.patch(f"/api/v1/webhooks/{made['id']}", json={"paused": "no"})).status_code == 400
        assert (await http.delete(f"/api/v1/webhooks/{made['id']}")).status_code == 204
        assert (await http.get(f"/api/v1/webhooks/{made['id']}")).status_code == 404


async def test_events_delivered_and_shown_among_the_deliveries(server: RunningServer, receiver: Receiver) -> None:
    made = await create(server, {"url": receiver.url, "filters": {"type": "ipv4,domain"}})
    receiver.secret = str(made["secret"])
    events = [
        NewEvent("ioc", orjson.dumps({"type": t, "value": v}))
        for t, v in (("ipv4", "192.0.2.1"), ("url", "http://x.example/"), ("domain", "x.example"))
    ]
    await server.ctx.stores.events.append(events)
    receiver.script.append(500)
    policy = Policy.from_settings(server.ctx.settings)
    await deliver_due(server.ctx.stores, policy, utcnow())
    await deliver_due(server.ctx.stores, policy, utcnow() + policy.delay(1))
    assert [e["data"]["value"] for e in receiver.acknowledged] == ["192.0.2.1", "x.example"]
    assert all(r["signed"] for r in receiver.requests)
    async with server.client(server.pro_key) as http:
        shown = (await http.get(f"/api/v1/webhooks/{made['id']}")).json()
    assert [(d["ok"], d["status"], d["events"]) for d in shown["deliveries"]] == [(True, 200, 2), (False, 500, 2)]
    assert shown["state"] == "active" and shown["last_event_id"] == receiver.requests[-1]["event_id"]


async def test_another_accounts_webhook_is_not_found(server: RunningServer, receiver: Receiver) -> None:
    made = await create(server, {"url": receiver.url})
    await accounts.create_user(server.ctx.accounts, "other@test.local", "pro")
    other = (await delivered_key(server.ctx.accounts, "other@test.local", "main")).secret
    async with server.client(other) as http:
        assert (await http.get(f"/api/v1/webhooks/{made['id']}")).status_code == 404
        assert (await http.delete(f"/api/v1/webhooks/{made['id']}")).status_code == 404
        assert (await http.get("/api/v1/webhooks")).json()["data"] == []


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"url": "ftp://example.com/"}, "url"),
        ({"url": ""}, "url"),
        ({"url": "http://127.0.0.1/", "filters": {"type": ["nonsense"]}}, "filters.type"),
        ({"url": "http://127.0.0.1/", "filters": {"last_event_id": "1-0"}}, "filters.last_event_id"),
        ({"url": "http://127.0.0.1/", "filters": {"severity": "high", "min_severity": "7"}}, None),
        ({"url": "http://127.0.0.1/", "filters": []}, "filters"),
    ],
)
async def test_bad_bodies_are_refused(server: RunningServer, body: dict[str, object], parameter: str | None) -> None:
    async with server.client(server.pro_key) as http:
        response = await http.post("/api/v1/webhooks", json=body)
    assert response.status_code == 400, response.text
    if parameter:
        assert response.json()["error"]["details"]["parameter"] == parameter


async def test_the_plans_quota(server: RunningServer, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(tiers._TABLE, "pro", replace(tiers.PRO, max_webhooks=1))
    await create(server, {"url": receiver.url})
    async with server.client(server.pro_key) as http:
        response = await http.post("/api/v1/webhooks", json={"url": receiver.url})
    assert response.status_code == 403 and response.json()["error"]["code"] == "quota_exceeded"


@pytest.fixture(params=server_backends())
async def guarded(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunningServer]:
    running = await start_server(make_settings(tmp_path, webhook_allow_private=False), backend_stores(request.param))
    yield running
    await stop_server(running)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.7/",
        "http://localhost/hook",
        "http://[::1]/",
    ],
)
async def test_private_addresses_are_refused_without_the_setting(guarded: RunningServer, url: str) -> None:
    async with guarded.client(guarded.pro_key) as http:
        response = await http.post("/api/v1/webhooks", json={"url": url})
        assert response.status_code == 400 and response.json()["error"]["details"]["parameter"] == "url"
        assert "private" in response.json()["error"]["message"]
        assert (await http.get("/api/v1/webhooks")).json()["data"] == []

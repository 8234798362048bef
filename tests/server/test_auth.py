"""Authentication, scopes and tiers through real HTTP (spec, Authentication and Errors)."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from support import delivered_key

from store import accounts
from store.apikeys import hash_key
from store.records import utcnow

ROUTE = "/api/v1/iocs"


async def _get(server, path=ROUTE, **kwargs):
    async with server.client() as http:
        return await http.get(path, **kwargs)


def _error(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["request_id"] == response.headers["X-Request-Id"]
    return body["error"]


async def test_missing_key_is_401_missing_api_key(server) -> None:
    response = await _get(server)
    assert response.status_code == 401
    assert _error(response)["code"] == "missing_api_key"


@pytest.mark.parametrize("raw", ["sk_live_" + "A" * 43, "not-a-key", "Bearer"])
async def test_unknown_key_is_401_invalid_api_key(server, raw: str) -> None:
    response = await _get(server, headers={"X-API-Key": raw})
    assert response.status_code == 401
    assert _error(response)["code"] == "invalid_api_key"
    assert raw not in response.text


@pytest.mark.parametrize("transport", ["bearer", "header", "query"])
async def test_every_transport_is_accepted(server, transport: str) -> None:
    key = server.pro_key
    kwargs = {
        "bearer": {"headers": {"Authorization": f"Bearer {key}"}},
        "header": {"headers": {"X-API-Key": key}},
        "query": {"params": {"api_key": key}},
    }[transport]
    response = await _get(server, **kwargs)
    assert response.status_code == 200, response.text
    assert key not in response.text


async def test_deleted_key_is_expired_on_the_next_request(server) -> None:
    store = server.ctx.accounts
    new = await delivered_key(store, "pro@test.local", "temp")
    assert (await _get(server, headers={"X-API-Key": new.secret})).status_code == 200
    await store.delete_key(new.record.user_id, "temp")
    response = await _get(server, headers={"X-API-Key": new.secret})
    assert response.status_code == 401
    assert _error(response)["code"] == "expired_api_key"


async def test_deactivated_and_expired_keys_are_refused(server) -> None:
    store = server.ctx.accounts
    new = await delivered_key(store, "free@test.local", "off")
    await store.set_key_active(new.record.user_id, "off", False)
    assert _error(await _get(server, headers={"X-API-Key": new.secret}))["code"] == "expired_api_key"
    await store.set_key_active(new.record.user_id, "off", True)
    assert (await _get(server, headers={"X-API-Key": new.secret})).status_code == 200
    old = await delivered_key(store, "free@test.local", "old", expires_at=utcnow() - timedelta(seconds=1))
    assert _error(await _get(server, headers={"X-API-Key": old.secret}))["code"] == "expired_api_key"


async def test_a_key_whose_secret_was_never_delivered_is_refused(server) -> None:
    store = server.ctx.accounts
    pending = await accounts.create_key(store, "pro@test.local", "pending")
    assert _error(await _get(server, headers={"X-API-Key": pending.secret}))["code"] == "expired_api_key"
    await accounts.deliver_key(store, pending)
    assert (await _get(server, headers={"X-API-Key": pending.secret})).status_code == 200


async def test_free_key_on_pro_route_is_insufficient_scope(server) -> None:
    response = await _get(server, "/api/v1/iocs/stats", headers={"X-API-Key": server.free_key})
    assert response.status_code == 403
    error = _error(response)
    assert error["code"] == "insufficient_scope"
    assert error["details"]["required_scope"] == "read:stats"
    assert error["details"]["your_scopes"] == ["read:articles", "read:iocs", "feeds", "sightings"]
    assert error["details"]["upgrade_url"].startswith("https://")


async def test_key_without_scope_is_refused(server) -> None:
    narrow = await delivered_key(server.ctx.accounts, "pro@test.local", "narrow", ["read:articles"])
    response = await _get(server, headers={"X-API-Key": narrow.secret})
    assert response.status_code == 403
    assert _error(response)["details"] == {
        "required_scope": "read:iocs", "your_scopes": ["read:articles"], "tier": "pro",
        "upgrade_url": server.ctx.settings.upgrade_url,
    }


async def test_keys_are_stored_only_as_hashes(server) -> None:
    key = await server.ctx.accounts.key_by_hash(hash_key(server.pro_key))
    assert key is not None
    assert server.pro_key not in repr(key)
    assert key.prefix.startswith("sk_live_") and len(key.prefix) < 16


async def test_key_quota_per_tier(server) -> None:
    from store.base import QuotaExceeded

    for n in range(2):
        await delivered_key(server.ctx.accounts, "free@test.local", f"extra{n}")
    with pytest.raises(QuotaExceeded):
        await delivered_key(server.ctx.accounts, "free@test.local", "fourth")


async def test_keys_never_reach_the_logs(server, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    await _get(server, params={"api_key": server.pro_key})
    await _get(server, headers={"Authorization": f"Bearer {server.free_key}"})
    await _get(server, headers={"X-API-Key": "sk_live_wrongwrongwrongwrong"})
    server_records = [r for r in caplog.records if r.name.startswith(("ctiwire", "tornado"))]
    assert any(r.name == "ctiwire.access" for r in server_records)
    assert not [r for r in server_records if "sk_live_" in r.getMessage()]

"""Rate limits per key on rolling windows, per tier, with costs (spec, Limits; issue 3)."""

from __future__ import annotations

import time

import httpx
import pytest

from config.tiers import FREE, PRO
from server.ratelimit import RateLimiter, make_storage

ROUTE = "/api/v1/iocs"


async def test_headers_on_every_authenticated_response(server) -> None:
    async with server.client(server.pro_key) as http:
        first = await http.get(ROUTE)
        second = await http.get(ROUTE)
    assert first.headers["X-RateLimit-Limit"] == "1000"
    assert int(first.headers["X-RateLimit-Remaining"]) == 999
    assert int(second.headers["X-RateLimit-Remaining"]) == 998
    assert abs(int(first.headers["X-RateLimit-Reset"]) - (time.time() + 60)) < 5


async def test_free_key_gets_429_after_ten_requests(server) -> None:
    async with server.client(server.free_key) as http:
        answers = [await http.get(ROUTE) for _ in range(11)]
    assert [r.status_code for r in answers] == [200] * 10 + [429]
    refused = answers[-1]
    error = refused.json()["error"]
    assert error["code"] == "rate_limit_exceeded"
    assert error["details"]["limit"] == 10
    assert error["details"]["tier"] == "free"
    assert error["details"]["upgrade_url"]
    assert error["details"]["reset_at"]
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert 1 <= int(refused.headers["Retry-After"]) <= 61


async def test_a_refused_request_still_refuses_other_routes_of_the_key(server) -> None:
    async with server.client(server.free_key) as http:
        for _ in range(10):
            await http.get(ROUTE)
        other = await http.get(ROUTE, params={"type": "ipv4"})
    assert other.status_code == 429
    async with server.client(server.pro_key) as http:
        assert (await http.get(ROUTE)).status_code == 200


async def test_costs_are_charged_from_the_same_budget() -> None:
    limiter = RateLimiter(make_storage(None))
    assert (await limiter.charge("k", FREE, 5)).remaining == 5
    assert (await limiter.charge("k", FREE, 5)).remaining == 0
    refused = await limiter.charge("k", FREE, 1)
    assert not refused.allowed and refused.exceeded == "minute"


async def test_daily_budget_is_enforced() -> None:
    limiter = RateLimiter(make_storage(None))
    tiny = FREE.__class__(**{**{f: getattr(FREE, f) for f in FREE.__slots__}, "requests_per_minute": 100,
                             "requests_per_day": 3})
    verdicts = [await limiter.charge("k", tiny, 1) for _ in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert verdicts[-1].exceeded == "day" and verdicts[-1].exceeded_limit == 3


@pytest.mark.redis
def test_two_processes_share_one_budget_through_redis(tmp_path, redis_server) -> None:
    from support import cli_env, ctiwire, spawn_server

    env = cli_env(tmp_path, CTIWIRE_REDIS_URL=redis_server.url)
    ctiwire(env, "users", "create", "two@test.local", "--tier", "free")
    key = ctiwire(env, "keys", "create", "two@test.local", "--name", "shared").strip().splitlines()[-1]
    servers = [spawn_server(env, "--no-seed") for _ in range(2)]
    try:
        codes = [httpx.get(servers[n % 2].url + ROUTE, headers={"X-API-Key": key}, timeout=10).status_code
                 for n in range(12)]
    finally:
        for s in servers:
            s.stop()
    assert codes == [200] * 10 + [429, 429]
    assert PRO.requests_per_minute == 1000

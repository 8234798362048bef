"""Rate limits per key on rolling windows, per tier, with costs (spec, Limits)."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from config.tiers import FREE, PRO, Tier
from server.ratelimit import Counters, Counts, LeasedCounters, MemoryCounters, RateLimiter, RedisCounters, Window

ROUTE = "/api/v1/iocs"


async def test_headers_on_every_authenticated_response(server) -> None:
    async with server.client(server.pro_key) as http:
        first = await http.get(ROUTE)
        second = await http.get(ROUTE)
    assert first.headers["X-RateLimit-Limit"] == "1000"
    assert int(first.headers["X-RateLimit-Remaining"]) == 999
    assert int(second.headers["X-RateLimit-Remaining"]) == 998
    # the whole budget is back once this minute's bucket has slid out of the window: 60 to 120 s away
    assert time.time() + 55 <= int(first.headers["X-RateLimit-Reset"]) <= time.time() + 125


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
    # ten in this minute's bucket: after the rollover they must slide out until one slot is free (6 s)
    assert 1 <= int(refused.headers["Retry-After"]) <= 67


async def test_a_refused_request_still_refuses_other_routes_of_the_key(server) -> None:
    async with server.client(server.free_key) as http:
        for _ in range(10):
            await http.get(ROUTE)
        other = await http.get(ROUTE, params={"type": "ipv4"})
    assert other.status_code == 429
    async with server.client(server.pro_key) as http:
        assert (await http.get(ROUTE)).status_code == 200


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis),
                        pytest.param("leased", marks=pytest.mark.redis)])
async def counters(request: pytest.FixtureRequest) -> AsyncIterator[Counters]:
    """The embedded counters and the shared ones on a real redis-server, charged alone or in leased
    blocks (the production form): one behaviour."""
    if request.param == "memory":
        yield MemoryCounters()
        return
    redis_server = request.getfixturevalue("redis_server")
    made = RedisCounters(redis_server.url)
    await made.client.flushdb()
    yield LeasedCounters(made) if request.param == "leased" else made
    await made.close()


class CountedRedis(RedisCounters):
    """Redis counters that count their round trips."""

    trips = 0

    async def charge(self, key_id: str, windows: tuple[Window, ...], cost: int, now: float) -> tuple[int, list[Counts]]:
        self.trips += 1
        return await super().charge(key_id, windows, cost, now)


@pytest.mark.redis
async def test_one_process_leases_blocks_and_admits_exactly_the_limit(redis_server) -> None:
    shared = CountedRedis(redis_server.url)
    await shared.client.flushdb()
    limiter = RateLimiter(LeasedCounters(shared))
    try:
        verdicts = [await limiter.charge("k", PRO, 1) for _ in range(1001)]
    finally:
        await shared.close()
    assert [v.allowed for v in verdicts] == [True] * 1000 + [False]
    # the headers count down one by one, though most requests were served from a block
    assert [v.remaining for v in verdicts[:1000]] == list(range(999, -1, -1))
    assert shared.trips < 250  # blocks of 10 (a hundredth of 1,000), then one by one near the limit


@pytest.mark.redis
async def test_processes_leasing_blocks_never_admit_beyond_the_limit(redis_server) -> None:
    """Two processes' leases: at most (block - 1) requests refused early, never one admitted too many."""
    shared = [RedisCounters(redis_server.url) for _ in range(2)]
    await shared[0].client.flushdb()
    limiters = [RateLimiter(LeasedCounters(s)) for s in shared]
    try:
        allowed = [(await limiters[n % 2].charge("k", PRO, 1)).allowed for n in range(1100)]
    finally:
        for s in shared:
            await s.close()
    assert 1000 - 9 <= sum(allowed) <= 1000
    assert not any(allowed[1000:])


@pytest.mark.redis
async def test_a_lease_ends_with_its_minute(redis_server) -> None:
    shared = CountedRedis(redis_server.url)
    await shared.client.flushdb()
    leased = LeasedCounters(shared)
    windows = RateLimiter(leased).windows(PRO)
    boundary = (time.time() // 60 + 1) * 60
    try:
        await leased.charge("k", windows, 1, boundary - 1)
        await leased.charge("k", windows, 1, boundary - 1)
        assert shared.trips == 1  # the second came from the block
        refused, counts = await leased.charge("k", windows, 1, boundary + 1)
    finally:
        await shared.close()
    assert shared.trips == 2 and refused == -1
    # the new minute charged its own block; the last minute keeps its whole block of 1 + 10 (9 unused)
    assert counts[0] == (11, 1)


def _tier(per_minute: int, per_day: int) -> Tier:
    return dataclasses.replace(FREE, requests_per_minute=per_minute, requests_per_day=per_day)


async def test_costs_are_charged_from_the_same_budget(counters: Counters) -> None:
    limiter = RateLimiter(counters)
    assert (await limiter.charge("k", FREE, 5)).remaining == 5
    assert (await limiter.charge("k", FREE, 5)).remaining == 0
    refused = await limiter.charge("k", FREE, 1)
    assert not refused.allowed and refused.exceeded == "minute"
    assert (await limiter.charge("other", FREE, 1)).remaining == 9  # budgets are per key


async def test_daily_budget_is_enforced(counters: Counters) -> None:
    limiter = RateLimiter(counters)
    verdicts = [await limiter.charge("k", _tier(100, 3), 1) for _ in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert verdicts[-1].exceeded == "day" and verdicts[-1].exceeded_limit == 3


async def test_a_refused_request_charges_neither_window(counters: Counters) -> None:
    """All or nothing: a request the day refuses must not eat into the minute (and the reverse)."""
    limiter = RateLimiter(counters)
    tier = _tier(5, 2)
    for _ in range(2):
        assert (await limiter.charge("k", tier, 1)).allowed
    assert not (await limiter.charge("k", tier, 1)).allowed
    now = time.time()
    refused, counts = await counters.charge("k", limiter.windows(tier), 0, now)
    assert refused == -1 and [c[1] for c in counts] == [2, 2]


async def test_the_previous_minute_still_counts_while_it_slides_out(counters: Counters) -> None:
    """Rolling, not fixed: requests made just before a minute boundary still count just after it."""
    windows = RateLimiter(counters).windows(_tier(10, 1000))
    boundary = (time.time() // 60 + 1) * 60
    for _ in range(10):
        assert (await counters.charge("k", windows, 1, boundary - 1))[0] == -1
    assert (await counters.charge("k", windows, 1, boundary + 1))[0] == 0  # 10 x 59/60 + 1 > 10
    assert (await counters.charge("k", windows, 1, boundary + 7))[0] == -1  # 10 x 53/60 + 1 <= 10


def test_reset_is_when_a_request_fits_again() -> None:
    minute = Window("minute", 60, 10)
    start = 6_000_000.0
    # full current bucket: it must roll over and decay until one slot is free: 10 x (1 - g) + 1 <= 10
    assert minute.admit_at((0, 10), 1, start + 30) == pytest.approx(start + 60 + 6)
    # previous bucket full, current empty: its share must fall to 9 of 10
    assert minute.admit_at((10, 0), 1, start + 3) == pytest.approx(start + 6)
    assert minute.admit_at((0, 0), 11, start + 3) == start + 60  # more than the whole limit: no division by 0
    assert minute.full_at((3, 4), start + 3) == start + 120
    assert minute.full_at((3, 0), start + 3) == start + 60


@pytest.mark.redis
@pytest.mark.slow  # several server processes
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


async def test_a_redis_outage_is_logged_once_when_it_starts_and_once_when_it_ends(
        tmp_path, caplog: pytest.LogCaptureFixture) -> None:
    """Not one warning per unmetered request."""
    from support import free_port, start_redis

    from config.tiers import TIERS
    from server.ratelimit import RateLimiter, RedisCounters

    port = free_port()
    limiter = RateLimiter(RedisCounters(f"redis://127.0.0.1:{port}/0", timeout=0.5))
    with caplog.at_level(logging.WARNING, logger="ctiwire.ratelimit"):
        for _ in range(30):
            assert (await limiter.charge("k", TIERS["free"], 1)).allowed  # fails open while Redis is down
        redis = start_redis(tmp_path / "redis", port=port)
        try:
            verdict = await limiter.charge("k", TIERS["free"], 1)
        finally:
            await limiter.counters.close()
            redis.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "ctiwire.ratelimit"]
    assert len(lines) == 2, lines
    assert "unavailable" in lines[0] and "after 30 unmetered requests" in lines[1]
    assert verdict.remaining == TIERS["free"].requests_per_minute - 1  # metered again

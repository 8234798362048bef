"""Concurrent sign-in bursts against two ``ctiwire serve`` processes on one SQLite database: the throttle's
count is taken before a password is verified, so however the burst is spread, at most the limit is
evaluated (a wrong password answers 400, a throttled attempt 429, the right one 302)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import ServerProcess, cli_env, spawn_server
from web_support import PASSWORD, XSRF

from web import sessions, throttle

pytestmark = pytest.mark.slow  # two server processes


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    # forwarded addresses believed from loopback: each burst comes from its own client address
    env = cli_env(tmp_path / "data", CTIWIRE_TRUSTED_PROXIES="127.0.0.1")
    first = spawn_server(env, "--no-seed")
    try:
        second = spawn_server(env, "--no-seed")
        yield first, second
        second.stop()
    finally:
        first.stop()


async def _ready_client(url: str, address: str) -> tuple[httpx.AsyncClient, str]:
    """A client of its own (cookie jar) with the sign-in form's ``_xsrf`` token, as a browser would have."""
    client = httpx.AsyncClient(base_url=url, timeout=120, headers={"X-Forwarded-For": address})
    page = await client.get("/account/signin")
    found = XSRF.search(page.text)
    assert found, page.status_code
    return client, found.group(1)


async def _burst(servers: tuple[ServerProcess, ...], address: str, forms: list[tuple[str, str]]
                 ) -> list[httpx.Response]:
    """Every (e-mail, password) posted at once, alternately to each server; the answers in that order."""
    clients = [await _ready_client(servers[n % len(servers)].url, address) for n in range(len(forms))]
    try:
        return list(await asyncio.gather(*(
            client.post("/account/signin", data={"email": email, "password": password, "_xsrf": token})
            for (client, token), (email, password) in zip(clients, forms, strict=True))))
    finally:
        for client, _ in clients:
            await client.aclose()


async def test_a_burst_on_one_account_evaluates_at_most_the_limit(two_servers: tuple[ServerProcess, ...]) -> None:
    async with httpx.AsyncClient(base_url=two_servers[0].url, timeout=60) as client:
        token = XSRF.search((await client.get("/account/signup")).text)
        assert token
        await client.post("/account/signup", data={"email": "vic@corp.example", "password": PASSWORD,
                                                   "_xsrf": token.group(1)})
    forms = [("vic@corp.example", f"wrong password {n:03}") for n in range(100)]
    forms[90] = ("vic@corp.example", PASSWORD)  # the right one, late in the burst
    answers = await _burst(two_servers, "10.1.0.1", forms)
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {400, 429, 302}, statuses  # at most 2 x 5 hashes: never too many waiting
    right = answers[90]
    if right.status_code == 302:  # evaluated, and it cleared the account's count: a second round may follow
        assert sessions.COOKIE in right.headers.get("set-cookie", "")
        assert statuses.count(400) <= 2 * throttle.ACCOUNT_LIMIT - 1, statuses
    else:  # throttled: no session, and only the limit was ever evaluated
        assert right.status_code == 429 and sessions.COOKIE not in right.headers.get("set-cookie", "")
        assert 1 <= statuses.count(400) <= throttle.ACCOUNT_LIMIT, statuses


async def test_a_burst_from_one_address_evaluates_at_most_its_limit(two_servers: tuple[ServerProcess, ...]) -> None:
    forms = [(f"user{n}@corp.example", "wrong password") for n in range(60)]
    answers = await _burst(two_servers, "10.2.0.1", forms)
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {400, 429, 503}, statuses  # 503: counted, but too many hashes waiting (not evaluated)
    assert all("busy" in a.text for a in answers if a.status_code == 503)
    assert 1 <= statuses.count(400) <= throttle.ADDRESS_LIMIT, statuses
    assert statuses.count(429) >= 60 - throttle.ADDRESS_LIMIT

"""The usage history over real HTTP on every backend: real API requests, a forced 429 among them, and the
browser's own budget show up per key and day once the server has flushed its counts."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from support import RunningServer, make_settings, start_server, stop_server
from web_support import browser, create_key, secret_of, sign_up

from store.records import utcnow
from store.usage import UsageDay


def _today(page: str, name: str) -> tuple[int, int]:
    """Requests and 429s of today in the figures table of ``name``'s history."""
    section = page[page.index(f'data-testid="history" data-key-name="{name}"'):]
    section = section[:section.index("</section>")]
    day = utcnow().date().isoformat()
    found = re.search(rf'<tr><td>{day}</td><td class="num">([\d,]+)</td><td class="num">([\d,]+)</td></tr>', section)
    assert found, section
    return int(found.group(1)), int(found.group(2))


async def test_requests_and_429s_per_key_and_the_web_budget(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "lu@corp.example")
        secret = secret_of(await create_key(client, "meter"))
        await create_key(client, "idle")
        async with site.client(secret) as api:
            codes = [(await api.get("/api/v1/iocs", params={"limit": 1})).status_code for _ in range(11)]
        assert codes.count(429) == 1 and codes[-1] == 429  # Free: 10 a minute
        assert (await client.get("/search", params={"q": "203.0.113.9"})).status_code == 200
        page = (await client.get("/account/usage")).text
    assert _today(page, "meter") == (11, 1)
    assert '11 requests, <span class="refused-note">1 refused (429)</span>' in page
    assert _today(page, "web")[0] >= 1
    idle = page[page.index('data-testid="history" data-key-name="idle"'):]
    assert idle[:idle.index("</section>")].count("No requests in the last 30 days.") == 1
    assert page.count('data-testid="history-chart"') == 2
    assert "Requests per day of key meter over 30 days: 11 in all, 1 refused (429)" in page


async def test_the_history_adds_what_other_processes_flushed(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "mo@corp.example")
        await create_key(client, "etl")
        key = next(k for k in await site.ctx.accounts.list_keys(
            (await site.ctx.accounts.get_user(email="mo@corp.example")).id) if k.name == "etl")
        day = utcnow().date().isoformat()
        await site.ctx.accounts.add_usage([UsageDay(key.id, day, 40, 2)])  # another process's flush
        await site.ctx.accounts.add_usage([UsageDay(key.id, day, 2, 0)])
        page = (await client.get("/account/usage")).text
    assert _today(page, "etl") == (42, 2)


async def test_each_process_flushes_on_its_own(tmp_path: Path) -> None:
    """Without a page read: the server's periodic flush (a short CTIWIRE_USAGE_FLUSH_SECONDS) brings the
    counts to the store, where every other process reads them."""
    site = await start_server(make_settings(tmp_path).replace(usage_flush_seconds=0.5))
    try:
        key = (await site.ctx.accounts.list_keys((await site.ctx.accounts.get_user(email="free@test.local")).id))[0]
        async with site.client(site.free_key) as api:
            for _ in range(3):
                assert (await api.get("/api/v1/iocs", params={"limit": 1})).status_code == 200
        rows: list[UsageDay] = []
        for _ in range(600):  # waiting only, up to a minute: no timing is asserted
            rows = await site.ctx.accounts.usage_history([key.id], "2000-01-01")
            if rows and rows[0].requests >= 3:  # a flush may land between two requests
                break
            await asyncio.sleep(0.1)
        assert [(r.requests, r.refused) for r in rows] == [(3, 0)]
    finally:
        await stop_server(site)

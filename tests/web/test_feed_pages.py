"""``/account/feeds`` over real HTTP on every backend: create, edit and delete through the forms, the same
checks as the API (a refused value names the filter), the URLs and curl lines per plan, escaping, and
another account's feed being the 404 page."""

from __future__ import annotations

import html
import re

import httpx
from support import RunningServer
from web_support import browser, post_form, sign_up

from exporters.registry import EXPORTERS
from store import accounts

ANA, BOB = "ana@corp.example", "bob@corp.example"
CARD = re.compile(r'data-testid="feed-card" data-feed-id="([0-9a-f-]{36})"')


async def _feeds(site: RunningServer, email: str) -> list[tuple[str, dict[str, list[str]]]]:
    user = await site.ctx.accounts.get_user(email=email)
    return [(f.name, f.filters) for f in await site.ctx.stores.feeds.list_feeds(user.id)]


async def _create(client: httpx.AsyncClient, **fields: object) -> httpx.Response:
    return await post_form(client, "/account/feeds", fields)


async def test_create_shows_the_urls_and_curl_lines_of_the_plan(site: RunningServer) -> None:
    async with browser(site) as ana:
        await sign_up(ana, ANA)
        assert "No feeds yet" in (await ana.get("/account/feeds")).text
        made = await _create(ana, name="finance", type=["ipv4", "domain"], industry="finance", source="Feed A, Feed B")
        assert made.status_code == 302 and made.headers["Location"] == "/account/feeds"
        assert await _feeds(site, ANA) == [
            ("finance", {"type": ["ipv4", "domain"], "industry": ["finance"], "source": ["Feed A", "Feed B"]})
        ]
        free = (await ana.get("/account/feeds")).text
        feed_id = CARD.search(free).group(1)  # type: ignore[union-attr]
        assert f"{site.url}/api/v1/feeds/{feed_id}/iocs" in free and "/api/taxii2/" not in free
        assert html.escape('curl -H "Authorization: Bearer $CTIWIRE_KEY"') in free and "data-copy-target" in free
        assert "1 of 1 feed in use" in free and "/static/copy.js" in free
        over = await _create(ana, name="second")
        assert over.status_code == 400 and "at most 1 saved feeds" in over.text
        await accounts.set_tier(site.ctx.accounts, ANA, "pro")
        pro = (await ana.get("/account/feeds")).text
        assert f"{site.url}/api/taxii2/api/collections/{feed_id}/" in pro
        assert html.escape("Accept: application/taxii+json;version=2.1") in pro
        for fmt in EXPORTERS:
            assert f"{site.url}/api/v1/feeds/{feed_id}/export/{fmt}" in pro, fmt


async def test_refused_values_name_the_filter_and_keep_the_form(site: RunningServer) -> None:
    async with browser(site) as ana:
        await sign_up(ana, ANA)
        refused = await _create(ana, name="mine", type="ipv4", source=",".join(f"s{n}" for n in range(101)))
        assert refused.status_code == 400 and "filters.source" in refused.text
        bad = await _create(ana, name="mine", type="ipv4", threat_actor="", industry="farming")
        assert bad.status_code == 400 and "filters.industry" in bad.text
        assert 'value="mine"' in bad.text and 'value="ipv4" checked' in bad.text
        nameless = await _create(ana, name="   ")
        assert nameless.status_code == 400 and "name" in nameless.text
        assert await _feeds(site, ANA) == []


async def test_edit_and_delete(site: RunningServer) -> None:
    async with browser(site) as ana:
        await sign_up(ana, ANA)
        await _create(ana, name="<script>alert(1)</script>", confidence="high")
        page = (await ana.get("/account/feeds")).text
        assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        feed_id = CARD.search(page).group(1)  # type: ignore[union-attr]
        form = (await ana.get(f"/account/feeds/{feed_id}/edit")).text
        assert 'value="high" checked' in form
        saved = await post_form(ana, f"/account/feeds/{feed_id}/edit", {"name": "renamed", "threat_actor": "Lazarus"})
        assert saved.status_code == 302
        assert await _feeds(site, ANA) == [("renamed", {"threat_actor": ["lazarus"]})]
        gone = await post_form(ana, f"/account/feeds/{feed_id}/delete", {}, page="/account/feeds")
        assert gone.status_code == 302 and await _feeds(site, ANA) == []


async def test_another_accounts_feed_is_the_404_page(site: RunningServer) -> None:
    async with browser(site) as ana, browser(site) as bob:
        await sign_up(ana, ANA)
        await sign_up(bob, BOB)
        await _create(ana, name="ana's", type="url")
        feed_id = CARD.search((await ana.get("/account/feeds")).text).group(1)  # type: ignore[union-attr]
        assert (await bob.get(f"/account/feeds/{feed_id}/edit")).status_code == 404
        for action in ("edit", "delete"):
            refused = await post_form(bob, f"/account/feeds/{feed_id}/{action}", {"name": "x"}, page="/account/feeds")
            assert refused.status_code == 404, action
        assert CARD.search((await bob.get("/account/feeds")).text) is None
        assert await _feeds(site, ANA) == [("ana's", {"type": ["url"]})]


async def test_status_and_min_score_through_the_form(site: RunningServer) -> None:
    async with browser(site) as ana:
        await sign_up(ana, ANA)
        made = await _create(ana, name="live", status=["active", "revoked"], min_score="60")
        assert made.status_code == 302
        assert await _feeds(site, ANA) == [("live", {"status": ["active", "revoked"], "min_score": ["60"]})]
        page = (await ana.get("/account/feeds")).text
        feed_id = CARD.search(page).group(1)  # type: ignore[union-attr]
        form = (await ana.get(f"/account/feeds/{feed_id}/edit")).text
        assert 'value="revoked" checked' in form and 'value="60"' in form and "none checked: active" in form
        refused = await post_form(ana, f"/account/feeds/{feed_id}/edit", {"name": "live", "min_score": "101"})
        assert refused.status_code == 400 and "filters.min_score" in refused.text

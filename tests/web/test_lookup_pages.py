"""The look-up pages of the account web (/search, /articles, /iocs and the downloads) over real HTTP on
every backend: the tier's lookbacks on the rows, escaping of what a person typed, the charge to the
account's web budget, and downloads that an independent validator (stix2) reads."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta

import httpx
import stix2
from conformance.factories import article, ioc
from support import RunningServer
from web_support import browser, post_form, sign_up

from config.tiers import FREE, PRO
from store import accounts
from store.records import ArticleIoc, utcnow
from web.reads import web_budget
from web.routes import next_pages, pages

PRO_PASSWORD = "pro password long"


async def sign_in_pro(site: RunningServer, client: httpx.AsyncClient) -> None:
    await accounts.set_password(site.ctx.accounts, "pro@test.local", PRO_PASSWORD)
    done = await post_form(client, "/account/signin", {"email": "pro@test.local", "password": PRO_PASSWORD})
    assert done.status_code == 302


async def seed(site: RunningServer) -> None:
    """A fresh IOC reported by a fresh article, and an IOC and an article only Pro's lookback reaches."""
    now = utcnow()
    fresh = article(1, title="Fresh report on evil-host", published_at=now - timedelta(hours=5),
                    modified_at=now - timedelta(hours=5), iocs=[ArticleIoc("domain", "c2.evil-host.net")],
                    cve_ids=["CVE-2024-3400"], threat_actors=["apt29"])
    old = article(2, title="Ten-day-old report", published_at=now - timedelta(days=10),
                  modified_at=now - timedelta(days=10), iocs=[ArticleIoc("ipv4", "203.0.113.77")])
    await site.ctx.articles.upsert_articles([fresh, old])
    recent, aged = now - timedelta(hours=2), now - timedelta(days=3)
    await site.ctx.iocs.upsert_iocs([
        ioc("c2.evil-host.net", first_seen=recent, last_seen=recent, modified=recent, article_ids=[fresh.id],
            sources=["CISA", "Talos"], confidence="high"),
        ioc("203.0.113.77", "ipv4", first_seen=aged, last_seen=aged, modified=aged, article_ids=[old.id])])


async def test_a_defanged_search_finds_the_indicator_with_its_articles_and_queries(site: RunningServer) -> None:
    await seed(site)
    async with browser(site) as client:
        await sign_up(client, "hunter@corp.example")
        page = await client.get("/search", params={"q": "hxxp://c2[.]evil-host(dot)net"})
        assert page.status_code == 200 and 'data-testid="lookup-value">http://c2.evil-host.net' in page.text
        page = await client.get("/search", params={"q": " C2[.]EVIL-HOST(dot)NET "})
    assert page.status_code == 200, page.text
    assert 'data-testid="lookup-value">c2.evil-host.net<' in page.text
    assert "Fresh report on evil-host" in page.text and "CISA" in page.text and "Talos" in page.text
    assert 'data-testid="risk-score">' in page.text and 'data-testid="first-seen">' in page.text
    for name in ("splunk_spl", "elastic_kql", "sentinel_kql"):
        assert f'data-copy-target="hq-{name}"' in page.text and f'id="hq-{name}"' in page.text
    assert "c2.evil-host.net" in html.unescape(re.search(r'id="hq-splunk_spl"[^>]*>([^<]+)<', page.text)[1])


async def test_a_cve_and_an_actor_show_their_articles(site: RunningServer) -> None:
    await seed(site)
    async with browser(site) as client:
        await sign_up(client, "cve@corp.example")
        by_actor = await client.get("/search", params={"q": "APT29"})
        unknown = await client.get("/search", params={"q": "198.51.100.250"})
    assert by_actor.status_code == 200 and 'data-testid="subject-articles"' in by_actor.text
    assert "Fresh report on evil-host" in by_actor.text and "Ten-day-old" not in by_actor.text
    assert unknown.status_code == 200 and 'data-testid="not-found"' in unknown.text
    assert 'id="hq-sentinel_kql"' in unknown.text  # the queries of a value ctiwire never saw


async def test_a_hostile_query_is_shown_as_text(site: RunningServer) -> None:
    hostile = '<script>alert("x")</script>'
    url = 'http://evil.example/a?q="><svg/onload=alert(1)>'
    async with browser(site) as client:
        await sign_up(client, "xss@corp.example")
        refused = await client.get("/search", params={"q": hostile})
        looked_up = await client.get("/search", params={"q": url})
        filtered = await client.get("/articles", params={"source": hostile, "threat_actor": hostile})
    assert refused.status_code == 400 and 'data-testid="search-error"' in refused.text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in refused.text
    for page in (refused, looked_up, filtered):
        assert "<script>alert" not in page.text and "<svg/onload" not in page.text
    assert looked_up.status_code == 200 and "&quot;&gt;&lt;svg/onload=alert(1)&gt;" in looked_up.text
    assert filtered.status_code in (200, 400) and "&lt;script&gt;" in filtered.text


async def test_free_rows_stay_inside_the_free_lookback_and_pro_rows_reach_further(site: RunningServer) -> None:
    await seed(site)
    old_id = (await site.ctx.articles.find_article(canonical_url="https://news.example/2")).id  # type: ignore[union-attr]
    async with browser(site) as free, browser(site) as pro:
        await sign_up(free, "free-rows@corp.example")
        await sign_in_pro(site, pro)
        week = {"window": "7d"}  # Free's plan has no such window: its one day
        free_iocs, pro_iocs = await free.get("/iocs", params=week), await pro.get("/iocs", params=week)
        free_articles, pro_articles = await free.get("/articles"), await pro.get("/articles")
        free_old, pro_old = await free.get(f"/articles/{old_id}"), await pro.get(f"/articles/{old_id}")
    assert free_iocs.status_code == pro_iocs.status_code == 200
    assert "c2.evil-host.net" in free_iocs.text and "203.0.113.77" not in free_iocs.text  # 3 days > Free's 1
    assert "203.0.113.77" in pro_iocs.text
    assert "Fresh report" in free_articles.text and "Ten-day-old" not in free_articles.text  # 10 days > 7
    assert "Ten-day-old" in pro_articles.text
    assert free_old.status_code == 404 and "Ten-day-old" not in free_old.text
    assert pro_old.status_code == 200 and 'data-testid="article-iocs"' in pro_old.text
    assert "203.0.113.77" in pro_old.text


async def test_web_reads_are_charged_to_the_accounts_web_budget(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "meter@corp.example")
        user = await site.ctx.accounts.get_user(email="meter@corp.example")
        assert (await client.get("/search")).status_code == 200  # the empty form reads nothing
        assert await site.ctx.limiter.usage(web_budget(user.id), FREE) is not None
        for path in ("/search?q=1.2.3.4", "/iocs", "/articles"):
            assert (await client.get(path)).status_code == 200
        usage = await site.ctx.limiter.usage(web_budget(user.id), FREE)
        assert usage is not None and [used for _, used in usage] == [3, 3]
        page = await client.get("/account/usage")
        assert 'data-testid="web-usage-minute">3<' in page.text
        answers = [(await client.get("/search", params={"q": f"198.51.100.{n}"})).status_code for n in range(8)]
    assert answers == [200] * 7 + [429]  # the Free plan's 10 a minute, the usage page's read not counted


async def test_pro_downloads_the_apis_export_and_free_sees_the_pro_note(site: RunningServer) -> None:
    await seed(site)
    async with browser(site) as free, browser(site) as pro:
        await sign_up(free, "no-export@corp.example")
        await sign_in_pro(site, pro)
        free_page = await free.get("/iocs")
        pro_page = await pro.get("/iocs", params={"confidence": "high", "window": "7d"})
        refused = await free.get("/iocs/download/stix")
        link = re.search(r'href="(/iocs/download/stix\?[^"]*)"', pro_page.text)
        assert link, pro_page.text
        download = await pro.get(html.unescape(link[1]))
    assert 'data-testid="pro-note"' in free_page.text and "/iocs/download/" not in free_page.text
    assert refused.status_code == 403
    assert download.status_code == 200, download.text[:500]
    assert download.headers["content-type"].startswith("application/stix+json")
    assert download.headers["content-disposition"].startswith("attachment")
    bundle = stix2.parse(download.text, allow_custom=True)
    patterns = [o.pattern for o in bundle.objects if o.type == "indicator"]
    assert patterns == ["[domain-name:value = 'c2.evil-host.net']"]  # high only: the filter on screen
    assert "window=7d" in link[1] and "confidence=high" in link[1]
    pro_user = await site.ctx.accounts.get_user(email="pro@test.local")
    usage = await site.ctx.limiter.usage(web_budget(pro_user.id), PRO)
    assert usage is not None and usage[0][1] == 1 + 5  # the list page, then the export's multiplier
    assert json.loads(download.text)["type"] == "bundle"


async def test_bad_filters_answer_a_message_and_pages_follow_the_cursor(site: RunningServer) -> None:
    now = utcnow()
    await site.ctx.articles.upsert_articles([article(100 + n, published_at=now - timedelta(hours=n),
                                                  modified_at=now - timedelta(hours=n)) for n in range(30)])
    async with browser(site) as client:
        await sign_up(client, "pager@corp.example")
        bad = await client.get("/articles", params={"severity": "apocalyptic"})
        bad_offset = await client.get("/iocs", params={"offset": "-1"})
        first = await client.get("/articles")
        older = re.search(r'href="([^"]+)" rel="next"', first.text)
        assert older, first.text
        second = await client.get(html.unescape(older[1]))
    assert bad.status_code == 400 and 'data-testid="filter-error"' in bad.text and "severity" in bad.text
    assert bad_offset.status_code == 400 and "offset" in bad_offset.text
    titles = [re.findall(r'data-testid="article-link">([^<]+)<', page.text) for page in (first, second)]
    assert len(titles[0]) == 25 and len(titles[1]) == 5 and not set(titles[0]) & set(titles[1])
    assert 'data-testid="first-page"' in second.text


async def test_the_pages_need_a_session_and_sign_in_leads_back(site: RunningServer) -> None:
    allowed = next_pages(pages({"ctx": site.ctx}))
    assert {"/search", "/articles", "/iocs"} <= allowed
    async with httpx.AsyncClient(base_url=site.url, follow_redirects=False) as client:
        for path in ("/search", "/articles", "/iocs", "/iocs/download/stix"):
            answer = await client.get(path)
            assert answer.status_code == 302 and answer.headers["location"].startswith("/account/signin?next=")


async def test_a_submitted_form_with_empty_fields_reads_as_no_filter(site: RunningServer) -> None:
    """A browser submits every field of a GET form, the untouched ones empty: those are no filter (the API
    itself refuses a blank value), and a refused filter on /iocs still shows its page, not a server error."""
    await seed(site)
    async with browser(site) as client:
        await sign_in_pro(site, client)
        iocs = await client.get("/iocs", params={"window": "7d", "type": "domain", "confidence": "", "source": ""})
        articles = await client.get("/articles", params={"q": "", "category": "", "severity": ""})
        refused = await client.get("/iocs", params={"window": "7d", "confidence": "certain"})
    assert iocs.status_code == 200 and "c2.evil-host.net" in iocs.text
    assert articles.status_code == 200 and "Fresh report on evil-host" in articles.text
    assert refused.status_code == 400 and "confidence" in refused.text


async def test_pro_downloads_the_dns_zone_that_named_checkzone_loads(site: RunningServer) -> None:
    import format_tools

    await seed(site)
    async with browser(site) as pro:
        await sign_in_pro(site, pro)
        page = await pro.get("/iocs", params={"window": "7d"})
        link = re.search(r'href="(/iocs/download/rpz\?[^"]*)"', page.text)
        assert link, page.text
        download = await pro.get(html.unescape(link[1]))
    assert download.status_code == 200 and download.headers["content-type"] == "text/dns"
    zone = format_tools.rpz(download.content)
    assert {owner for owner, rtype, _ in zone if rtype == "CNAME"} == {
        "c2.evil-host.net.rpz.ctiwire.", "*.c2.evil-host.net.rpz.ctiwire."}
    pro_user = await site.ctx.accounts.get_user(email="pro@test.local")
    usage = await site.ctx.limiter.usage(web_budget(pro_user.id), PRO)
    assert usage is not None and usage[0][1] == 1 + 2  # the list page, then the zone's multiplier


async def test_the_iocs_page_shows_score_and_status_and_active_ones_by_default(site: RunningServer) -> None:
    now = utcnow()
    old, fresh = now - timedelta(days=6), now - timedelta(hours=1)
    await site.ctx.iocs.upsert_iocs([
        ioc("91.215.85.9", "ipv4", confidence="low", source_category="community", first_seen=old, last_seen=old,
            modified=old),  # a 10-day half-life from 30: below 25 after about 3 days
        ioc("fresh.bad-host.net", first_seen=fresh, last_seen=fresh, modified=fresh)])
    async with browser(site) as pro:
        await sign_in_pro(site, pro)
        default = await pro.get("/iocs", params={"window": "7d"})
        expired = await pro.get("/iocs", params={"window": "7d", "status": "expired"})
    assert "fresh.bad-host.net" in default.text and "91.215.85.9" not in default.text
    assert re.search(r'data-testid="ioc-status"[^>]*>active<', default.text)
    assert "91.215.85.9" in expired.text and re.search(r'data-testid="ioc-status"[^>]*>expired<', expired.text)
    assert re.search(r'data-testid="ioc-score">\d+<', default.text)

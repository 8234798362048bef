"""The key pages, usage and dashboard over real HTTP, on every backend."""

from __future__ import annotations

import re

import httpx
from support import RunningServer
from web_support import browser, create_key, post_form, secret_of, sign_up

from web.base import CSP


async def test_create_use_and_delete_a_key(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "ana@corp.example")
        created = await create_key(client, "siem")
        secret = secret_of(created)
        assert created.status_code == 200 and 'data-testid="copy-secret"' in created.text
        async with site.client(secret) as api:
            assert (await api.get("/api/v1/articles", params={"limit": 1})).status_code == 200
        listing = await client.get("/account/keys")  # a revisit never shows the secret again
        assert secret not in listing.text and secret[8:20] not in listing.text
        assert re.search(r'data-testid="key-row" data-key-name="siem"', listing.text)
        assert "read:articles" in listing.text and "never" in listing.text  # scopes, last used / expires
        deleted = await post_form(client, "/account/keys/siem/delete", {}, page="/account/keys")
        assert deleted.status_code == 302
        after = await client.get("/account/keys")
        assert "Key “siem” deleted." in after.text and 'data-key-name="siem"' not in after.text
        async with site.client(secret) as api:
            refused = await api.get("/api/v1/articles", params={"limit": 1})
            assert refused.status_code == 401 and refused.json()["error"]["code"] == "expired_api_key"


async def test_deactivate_and_activate(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "bo@corp.example")
        secret = secret_of(await create_key(client, "etl job/1"))
        path = "/account/keys/etl%20job%2F1"
        await post_form(client, f"{path}/deactivate", {}, page="/account/keys")
        assert 'data-testid="key-state">deactivated<' in (await client.get("/account/keys")).text
        async with site.client(secret) as api:
            assert (await api.get("/api/v1/articles")).json()["error"]["code"] == "expired_api_key"
        await post_form(client, f"{path}/activate", {}, page="/account/keys")
        async with site.client(secret) as api:
            assert (await api.get("/api/v1/articles")).status_code == 200


async def test_scopes_expiry_and_quota(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "cy@corp.example")
        beyond = await create_key(client, "x", scopes="read:misp")
        assert beyond.status_code == 400 and "does not include" in beyond.text
        await create_key(client, "narrow", scopes="read:iocs", expires_in_days="30")
        keys = {k.name: k for k in await site.ctx.accounts.list_keys((await site.ctx.accounts.get_user(
            email="cy@corp.example")).id)}
        assert keys["narrow"].scopes == ["read:iocs"] and keys["narrow"].expires_at is not None
        bad_days = await create_key(client, "y", expires_in_days="0")
        assert bad_days.status_code == 400 and "from 1 to" in bad_days.text
        await create_key(client, "two")
        await create_key(client, "three")
        over = await create_key(client, "four")
        assert over.status_code == 400 and "at most 3 API keys" in over.text
        same = await create_key(client, "two")
        assert "at most 3" in same.text or "already have a key" in same.text


async def test_csrf_is_required_and_nothing_changes_without_it(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "di@corp.example")
        refused = await client.post("/account/keys", data={"name": "sneaky"})
        assert refused.status_code == 403
        forged = await client.post("/account/keys", data={"name": "sneaky", "_xsrf": "2|00|00|00"})
        assert forged.status_code == 403
        user = await site.ctx.accounts.get_user(email="di@corp.example")
        assert await site.ctx.accounts.list_keys(user.id) == []
        assert (await client.post("/account/signout")).status_code == 403


async def test_every_page_carries_the_security_headers(site: RunningServer) -> None:
    async with browser(site) as client:
        pages = [await client.get(p) for p in ("/", "/account/signin", "/account/signup", "/api/docs")]
        await sign_up(client, "ed@corp.example")
        pages += [await client.get(p) for p in ("/account/keys", "/account/usage", "/account/dashboard")]
        pages.append(await client.post("/account/keys", data={"name": "x"}))  # an error page too
    for page in pages:
        assert page.headers["Content-Security-Policy"] == CSP, page.url
        assert "script-src 'self';" in CSP and "frame-ancestors 'none'" in CSP
        assert page.headers["X-Frame-Options"] == "DENY"
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        assert page.headers["Referrer-Policy"] == "same-origin"
        assert "<script>" not in page.text  # no inline script anywhere


async def test_what_users_type_is_escaped(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "fa@corp.example")
        await create_key(client, "<script>alert(1)</script>")
        page = await client.get("/account/keys")
        assert "<script>alert(1)</script>" not in page.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
        echoed = await post_form(client, "/account/signin", {"email": '"><img src=x onerror=alert(1)>',
                                                              "password": "x" * 12}, page="/account/signin")
        assert "<img src=x" not in echoed.text


async def test_one_user_never_touches_another_users_keys(site: RunningServer) -> None:
    async with browser(site) as ana, browser(site) as bo:
        await sign_up(ana, "ga@corp.example")
        await sign_up(bo, "ha@corp.example")
        secret = secret_of(await create_key(ana, "shared-name"))
        tried = await post_form(bo, "/account/keys/shared-name/delete", {}, page="/account/keys")
        assert tried.status_code == 302
        assert "You have no key named" in (await bo.get("/account/keys")).text
        for path in ("/account/keys", "/account/usage"):
            assert "shared-name" not in (await bo.get(path)).text
        async with site.client(secret) as api:
            assert (await api.get("/api/v1/articles")).status_code == 200


async def test_a_session_never_authenticates_the_api(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "ib@corp.example")
        for path in ("/api/v1/articles", "/api/v1/iocs", "/api/taxii2/"):
            answer = await client.get(path, headers={"Accept": "application/taxii+json;version=2.1"})
            assert answer.status_code == 401, path


async def test_usage_shows_the_counters_the_api_charges(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "jo@corp.example")
        secret = secret_of(await create_key(client, "meter"))
        async with site.client(secret) as api:
            for _ in range(3):
                assert (await api.get("/api/v1/iocs", params={"limit": 1})).status_code == 200
        page = await client.get("/account/usage")
        assert re.search(r'data-testid="usage-minute">3<', page.text), page.text
        assert re.search(r'data-testid="usage-day">3<', page.text)
        assert "/ 10" in page.text and "/ 1,000" in page.text  # the Free limits
        row = page.text[page.text.index('data-key-name="meter"'):]
        assert "never" not in row[:row.index("</tr>")]  # the API recorded when the key was last used


async def test_signed_out_pages_redirect_to_sign_in(site: RunningServer) -> None:
    async with httpx.AsyncClient(base_url=site.url, follow_redirects=False) as client:
        for path in ("/account/keys", "/account/usage", "/account/dashboard"):
            answer = await client.get(path)
            assert answer.status_code == 302 and answer.headers["location"] == f"/account/signin?next={path}"
        assert (await client.get("/")).status_code == 200
        assert (await client.get("/api/docs")).status_code == 200

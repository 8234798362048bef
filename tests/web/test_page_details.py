"""The account web's small details over real HTTP: HTML 404 pages under /account, the messages after
sign-out and after a session ended, ``next`` only to GET pages, one ellipsis, times with their zone and
per-row buttons that name their key (WCAG 2.2 2.4.6 / 4.1.2)."""

from __future__ import annotations

import re
from datetime import timedelta

from support import RunningServer
from web_support import PASSWORD, browser, create_key, post_form, sign_up

from store.records import utcnow
from web import sessions


async def test_unknown_account_addresses_answer_an_html_page(site: RunningServer) -> None:
    async with browser(site) as client:
        for bare in ("/account", "/account/"):
            answer = await client.get(bare)
            assert answer.status_code == 302 and answer.headers["location"] == "/account/keys"
        for method, path in (("GET", "/account/nope"), ("GET", "/account/keys/x/y"), ("POST", "/account/nope")):
            page = await client.request(method, path)
            assert page.status_code == 404 and page.headers["content-type"].startswith("text/html"), (method, path)
            assert 'data-testid="error-message"' in page.text and 'class="skip"' in page.text
            assert "default-src 'self'" in page.headers["content-security-policy"]
        signed_in = await sign_up(client, "na@corp.example")
        assert signed_in.status_code == 302
        page = await client.get("/account/nope")
        assert page.status_code == 404 and "na@corp.example" in page.text  # the layout knows who is signed in
        assert (await client.get("/api/v1/nope")).headers["content-type"].startswith("application/json")


async def test_sign_out_says_so(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "ob@corp.example")
        done = await post_form(client, "/account/signout", {}, page="/account/keys")
        assert done.status_code == 302 and done.headers["location"] == "/account/signin"
        page = await client.get("/account/signin")
        assert "You are signed out." in page.text
        assert "You are signed out." not in (await client.get("/account/signin")).text  # once


async def test_an_ended_session_sends_to_sign_in_with_the_reason(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "pi@corp.example")
        assert (await client.get("/account/keys")).status_code == 200  # shows the welcome message, as a browser
        session_id = sessions.session_hash(client.cookies[sessions.COOKIE])
        idle = utcnow() - timedelta(minutes=site.ctx.settings.session_idle_minutes, seconds=5)
        await site.ctx.accounts.touch_session(session_id, idle)
        ended = await client.get("/account/usage")
        assert ended.status_code == 302
        assert ended.headers["location"] == "/account/signin?next=/account/usage&reason=session-ended"
        assert sessions.COOKIE not in client.cookies  # the dead cookie is cleared: the next visit is plain
        page = await client.get(ended.headers["location"])
        assert "Your session ended; sign in again." in page.text
        assert 'name="next" value="/account/usage"' in page.text
        again = await client.get("/account/usage")
        assert again.headers["location"] == "/account/signin?next=/account/usage"


async def test_next_leads_only_to_pages_a_get_can_open(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "qu@corp.example")
    expected = {"/account/signout": "/account/keys", "/account/keys/k/delete": "/account/keys",
                "/account/nope": "/account/keys", "/api/v1/articles": "/account/keys",
                "/account/dashboard?window=30d": "/account/dashboard?window=30d",
                "/account/usage": "/account/usage"}
    for target, location in expected.items():
        async with browser(site) as client:
            form = await client.get("/account/signin", params={"next": target})
            assert f'name="next" value="{location}"' in form.text, target
            done = await post_form(client, "/account/signin", {"email": "qu@corp.example", "password": PASSWORD,
                                                                "next": target})
            assert done.status_code == 302 and done.headers["location"] == location, target


async def test_key_rows_show_one_ellipsis_times_in_utc_and_named_buttons(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "ra@corp.example")
        await create_key(client, "siem-prod", expires_in_days="30")
        for path in ("/account/keys", "/account/usage"):
            page = (await client.get(path)).text
            assert "……" not in page and re.search(r"sk_live_[A-Za-z0-9_\-]{4}…<", page), path
        keys = (await client.get("/account/keys")).text
        stamps = re.findall(r'class="when" data-label="(?:Created|Expires)">([^<]+)<', keys)
        assert len(stamps) == 2 and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", s) for s in stamps), stamps
        for action, end in (("Deactivate", "</button>"), ("Rotate", "</a>"), ("Edit", "</a>"), ("Delete", "</a>")):
            assert f'{action}<span class="visually-hidden"> key siem-prod</span>{end}' in keys
        dashboard = (await client.get("/account/dashboard")).text
        assert re.search(r"Updated [^<]+ ago <span class=\"muted\">\(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)<", dashboard)

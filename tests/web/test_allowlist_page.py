"""``/account/allowlist`` over real HTTP on every backend: entries added one a line and deleted through the
forms, the API's checks with the API's words, escaping of what users type, CSRF on every form, and another
account's entry left alone."""

from __future__ import annotations

import re

from support import RunningServer
from web_support import browser, post_form, sign_up

ANA, BOB = "ana@corp.example", "bob@corp.example"
ENTRY = re.compile(r'data-testid="allow-entry" data-entry-id="([0-9a-f-]{36})"')


async def _values(site: RunningServer, email: str) -> list[str]:
    user = await site.ctx.accounts.get_user(email=email)
    return [e.value for e in await site.ctx.stores.allowlist.list_allow_entries(user.id)]


async def test_add_and_delete_through_the_forms(site: RunningServer) -> None:
    async with browser(site) as ana:
        await sign_up(ana, ANA)
        page = (await ana.get("/account/allowlist")).text
        assert "No entries yet" in page and "0 of 100 entries" in page
        assert page.count('name="_xsrf"') == 2  # the add form and the sign-out form
        typed = {"entries": "10.20.0.0/16\ncorp[.]example\n\n", "note": "ours"}
        added = await post_form(ana, "/account/allowlist", typed)
        assert added.status_code == 302 and added.headers["Location"] == "/account/allowlist"
        assert await _values(site, ANA) == ["10.20.0.0/16", "corp.example"]
        shown = (await ana.get("/account/allowlist")).text
        assert "2 entries added" in shown and shown.count('data-testid="delete-entry"') == 2
        assert shown.count('name="_xsrf"') == 4  # every delete form carries the token too
        first = ENTRY.search(shown).group(1)  # type: ignore[union-attr]
        gone = await post_form(ana, f"/account/allowlist/{first}/delete", {})
        assert gone.status_code == 302 and await _values(site, ANA) == ["corp.example"]


async def test_refused_entries_keep_the_form_and_are_escaped(site: RunningServer) -> None:
    async with browser(site) as ana:
        await sign_up(ana, ANA)
        typed = "evil.example\n<script>alert(1)</script>"
        refused = await post_form(ana, "/account/allowlist", {"entries": typed, "note": "<b>n</b>"})
        assert refused.status_code == 400 and "entries[1]" in refused.text
        assert "<script>alert(1)</script>" not in refused.text and "&lt;script&gt;" in refused.text
        assert "&lt;b&gt;n&lt;/b&gt;" in refused.text and await _values(site, ANA) == []
        noted = await post_form(ana, "/account/allowlist", {"entries": "evil.example", "note": "<b>n</b>"})
        assert noted.status_code == 302
        assert "&lt;b&gt;n&lt;/b&gt;" in (await ana.get("/account/allowlist")).text


async def test_a_post_without_the_token_is_refused(site: RunningServer) -> None:
    async with browser(site) as ana:
        await sign_up(ana, ANA)
        response = await ana.post("/account/allowlist", data={"entries": "evil.example"})
        assert response.status_code == 403 and await _values(site, ANA) == []


async def test_another_accounts_entry_is_left_alone(site: RunningServer) -> None:
    async with browser(site) as ana:
        await sign_up(ana, ANA)
        await post_form(ana, "/account/allowlist", {"entries": "corp.example"})
        entry = ENTRY.search((await ana.get("/account/allowlist")).text).group(1)  # type: ignore[union-attr]
    async with browser(site) as bob:
        await sign_up(bob, BOB)
        await post_form(bob, f"/account/allowlist/{entry}/delete", {})
    assert await _values(site, ANA) == ["corp.example"]

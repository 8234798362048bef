"""One key's pages over real HTTP, on every backend: delete after confirming, rotate with a grace for the
old secret (checked against the real API: 200 inside the grace, 401 ``expired_api_key`` after it), rename
and re-scope, and the flag on keys that expire within 7 days. Plain forms: no script involved."""

from __future__ import annotations

from datetime import timedelta

import pytest
from support import RunningServer
from web_support import browser, create_key, form_token, post_form, secret_of, sign_up

from store import accounts
from store.records import utcnow


async def _status(site: RunningServer, secret: str) -> tuple[int, str | None]:
    async with site.client(secret) as api:
        answer = await api.get("/api/v1/articles", params={"limit": 1})
    return answer.status_code, answer.json()["error"]["code"] if answer.status_code != 200 else None


async def test_delete_asks_first_on_its_own_page(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "ana@corp.example")
        secret = secret_of(await create_key(client, "siem"))
        listing = await client.get("/account/keys")
        assert 'href="/account/keys/siem/delete"' in listing.text  # a link: no form posts from the list
        confirm = await client.get("/account/keys/siem/delete")
        assert confirm.status_code == 200 and "Delete key “siem”?" in confirm.text
        assert secret[:12] in confirm.text and "never" in confirm.text  # prefix, last use
        assert (await _status(site, secret))[0] == 200  # showing the page changed nothing
        done = await post_form(client, "/account/keys/siem/delete", {})
        assert done.status_code == 302 and await _status(site, secret) == (401, "expired_api_key")
        assert "Key “siem” deleted." in (await client.get("/account/keys")).text
        assert (await client.get("/account/keys/siem/delete")).status_code == 404


async def test_rotate_keeps_the_old_secret_for_the_grace_then_refuses_it(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "bo@corp.example")
        old = secret_of(await create_key(client, "etl job/1"))
        path = "/account/keys/etl%20job%2F1/rotate"
        form = await client.get(path)
        assert form.status_code == 200 and 'value="1h" checked' in form.text
        rotated = await post_form(client, path, {"grace": "1h"})
        new = secret_of(rotated)
        assert new != old and "New secret for “etl job/1”" in rotated.text and 'data-testid="old-until"' in rotated.text
        assert secret_of(rotated) not in (await client.get("/account/keys")).text  # shown once
        assert await _status(site, old) == (200, None) and await _status(site, new) == (200, None)  # inside
        # After the grace, by the store's clock: a rotation made two hours ago with one hour of grace.
        newest = await accounts.rotate_key(site.ctx.accounts, "bo@corp.example", "etl job/1", "1h",
                                           now=utcnow() - timedelta(hours=2))
        await accounts.deliver_key(site.ctx.accounts, newest)
        assert await _status(site, new) == (401, "expired_api_key")  # its grace is over
        assert await _status(site, old) == (401, "expired_api_key")  # two rotations back: revoked
        assert await _status(site, newest.secret) == (200, None)
        [key] = await site.ctx.accounts.list_keys((await site.ctx.accounts.get_user(email="bo@corp.example")).id)
        assert (key.name, key.active, key.pending) == ("etl job/1", True, False)


async def test_rotate_without_grace_stops_the_old_secret_at_once(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "cy@corp.example")
        old = secret_of(await create_key(client, "ci"))
        rotated = await post_form(client, "/account/keys/ci/rotate", {"grace": "none"})
        assert "The old secret no longer works." in rotated.text
        assert await _status(site, old) == (401, "expired_api_key")
        assert await _status(site, secret_of(rotated)) == (200, None)
        refused = await post_form(client, "/account/keys/ci/rotate", {"grace": "2h"})
        assert refused.status_code == 400 and "unknown grace period" in refused.text
        await post_form(client, "/account/keys/ci/deactivate", {}, page="/account/keys")
        paused = await post_form(client, "/account/keys/ci/rotate", {"grace": "none"})
        assert paused.status_code == 400 and "activate it before rotating" in paused.text
        assert (await client.get("/account/keys/nope/rotate")).status_code == 404


async def test_rename_and_scopes_within_the_tier(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "di@corp.example")
        secret = secret_of(await create_key(client, "siem"))
        await create_key(client, "other")
        page = await client.get("/account/keys/siem/edit")
        assert page.status_code == 200 and 'value="siem"' in page.text and 'value="read:misp"' not in page.text
        for body, message in (({"name": "other", "scopes": "read:iocs"}, "already have a key"),
                              ({"name": "x", "scopes": "read:misp"}, "does not include"),
                              ({"name": "x"}, "at least one scope"), ({"name": " ", "scopes": "read:iocs"}, "1 to")):
            refused = await post_form(client, "/account/keys/siem/edit", body)
            assert refused.status_code == 400 and message in refused.text, body
        store = site.ctx.accounts
        user = await store.get_user(email="di@corp.example")
        assert [k.name for k in await store.list_keys(user.id)] == ["siem", "other"]  # nothing changed
        saved = await post_form(client, "/account/keys/siem/edit", {"name": "siem-prod", "scopes": "read:iocs"})
        assert saved.status_code == 302
        assert "Key “siem-prod” saved." in (await client.get("/account/keys")).text
        keys = {k.name: k.scopes for k in await store.list_keys(user.id)}
        assert keys == {"siem-prod": ["read:iocs"], "other": list(accounts.TIERS["free"].scopes)}
        async with site.client(secret) as api:  # the same secret, the new scopes
            assert (await api.get("/api/v1/iocs", params={"limit": 1})).status_code == 200
            denied = await api.get("/api/v1/articles", params={"limit": 1})
            assert denied.status_code == 403


async def test_keys_expiring_within_seven_days_are_flagged(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "ed@corp.example")
        await create_key(client, "soon", expires_in_days="7")
        await create_key(client, "later", expires_in_days="8")
        listing = await client.get("/account/keys")
        assert listing.text.count('data-testid="expires-soon"') == 1
        assert "1 key expires within 7 days: soon." in listing.text
        row = listing.text.split('data-key-name="soon"')[1].split("</tr>")[0]
        assert "expires soon" in row
        usage = await client.get("/account/usage")
        assert usage.text.count('data-testid="expires-soon"') == 1
        assert "expires soon" in (await client.get("/account/keys/soon/delete")).text


@pytest.mark.parametrize("path", ["/account/keys/siem/delete", "/account/keys/siem/rotate",
                                  "/account/keys/siem/edit"])
async def test_another_users_key_is_not_found(site: RunningServer, path: str) -> None:
    async with browser(site) as owner, browser(site) as other:
        await sign_up(owner, "fa@corp.example")
        await create_key(owner, "siem")
        await sign_up(other, "gu@corp.example")
        assert (await other.get(path)).status_code == 404
        token = await form_token(other, "/account/keys")
        assert (await other.post(path, data={"_xsrf": token, "grace": "none", "name": "x",
                                             "scopes": "read:iocs"})).status_code in (302, 404)
        user = await site.ctx.accounts.get_user(email="fa@corp.example")
        [key] = await site.ctx.accounts.list_keys(user.id)
        assert (key.name, key.previous_hash) == ("siem", None)




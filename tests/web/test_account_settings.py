"""The account's own settings over real HTTP on every backend: change the password, sign out everywhere,
delete the account; a forgotten password and the address check through the mail in the outbox."""

from __future__ import annotations

import asyncio
import email
import email.policy
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest
from mongo_support import backend_stores, server_backends
from support import RunningServer, make_settings, start_server, stop_server
from web_support import PASSWORD, browser, create_key, post_form, register, secret_of, sign_in, sign_up

from store import accounts, mail
from store.mongo import MongoStore
from store.records import utcnow
from web import sessions, throttle

ANA = "ana@corp.example"
NEW = "a brand new passphrase"
LINK = re.compile(r"(http://127\.0\.0\.1:\d+(/account/(?:reset|verify)\?token=[\w%-]+))")


@pytest.fixture(params=server_backends())
async def verify_site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunningServer]:
    running = await start_server(make_settings(tmp_path, signup="verify"), backend_stores(request.param))
    yield running
    if isinstance(running.ctx.stores.lifecycle, MongoStore):
        await running.ctx.stores.lifecycle.client.drop_database(running.ctx.stores.lifecycle.db_name)
    await stop_server(running)


def sent(site: RunningServer) -> list[EmailMessage]:
    folder = mail.outbox(site.ctx.settings)
    paths = sorted(folder.glob("*.eml")) if folder.exists() else []
    return [email.message_from_bytes(path.read_bytes(), policy=email.policy.default)  # type: ignore[misc]
            for path in paths]


async def next_mail(site: RunningServer, count: int) -> EmailMessage:
    """The ``count``-th message of the outbox, waited for (mail leaves in the background), at most 30 s."""
    for _ in range(300):
        if len(found := sent(site)) >= count:
            return found[count - 1]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no message #{count} in the outbox")


def link_in(message: EmailMessage) -> str:
    found = LINK.search(message.get_content())
    assert found, message.get_content()
    return found.group(2)


async def is_signed_in(client: httpx.AsyncClient) -> bool:
    return (await client.get("/account/keys")).status_code == 200


async def test_a_forgotten_password_is_reset_from_the_mailed_link_once(site: RunningServer) -> None:
    async with browser(site) as client, browser(site) as other:
        await sign_up(other, ANA)
        asked = await post_form(client, "/account/forgot", {"email": ANA.upper()})
        assert asked.status_code == 302 and asked.headers["location"] == "/account/signin"
        message = await next_mail(site, 1)
        assert message["To"] == ANA and message["Subject"] == "Choose a new ctiwire password"
        link = link_in(message)
        form = await client.get(link)
        assert form.status_code == 200 and 'name="token"' in form.text
        done = await post_form(client, "/account/reset", {"token": link.split("=", 1)[1], "password": NEW}, page=link)
        assert done.status_code == 302 and done.headers["location"] == "/account/signin"
        assert not await is_signed_in(other)  # the reset ended every session
        assert (await sign_in(client, ANA, PASSWORD)).status_code == 400
        assert (await sign_in(client, ANA, NEW)).headers["location"] == "/account/keys"
        again = await post_form(client, "/account/reset", {"token": link.split("=", 1)[1], "password": PASSWORD},
                                page=link)
        assert again.status_code == 400 and "expired or was used" in again.text
        assert (await sign_in(other, ANA, NEW)).status_code == 302


async def test_the_forgot_form_answers_unknown_and_known_alike_and_mails_only_the_owner(site: RunningServer
                                                                                     ) -> None:
    async with browser(site) as client:
        await register(client, ANA)
        answers = []
        for address in ("nobody@corp.example", ANA):
            asked = await post_form(client, "/account/forgot", {"email": address})
            answers.append((asked.status_code, asked.headers["location"], (await client.get("/account/signin")).text
                            .split('data-testid="flash"')[1][:200]))
        assert answers[0] == answers[1]
        assert [m["To"] for m in [await next_mail(site, 1)]] == [ANA]
        await asyncio.sleep(0.5)  # the unknown address must not get a late message either
        assert len(sent(site)) == 1


async def test_the_forgot_form_is_throttled_for_known_and_unknown_addresses(site: RunningServer) -> None:
    async with browser(site) as client:
        await register(client, ANA)
        for address in (ANA, "nobody@corp.example"):
            codes = [(await post_form(client, "/account/forgot", {"email": address})).status_code
                     for _ in range(throttle.MAIL_ACCOUNT_LIMIT + 1)]
            assert codes == [302] * throttle.MAIL_ACCOUNT_LIMIT + [429], address


async def test_a_too_short_password_keeps_the_link_and_an_expired_link_is_refused(site: RunningServer) -> None:
    async with browser(site) as client:
        await register(client, ANA)
        user = await site.ctx.accounts.get_user(email=ANA)
        token = await accounts.issue_token(site.ctx.accounts, user, "reset")
        short = await post_form(client, "/account/reset", {"token": token, "password": "short"}, page="/account/forgot")
        assert short.status_code == 400 and "12" in short.text
        assert (await post_form(client, "/account/reset", {"token": token, "password": NEW},
                                page="/account/forgot")).status_code == 302
        stale = utcnow() - timedelta(seconds=1)
        await site.ctx.accounts.save_token(accounts.token_hash("old"), "reset", user.id, stale)
        old = await post_form(client, "/account/reset", {"token": "old", "password": PASSWORD}, page="/account/forgot")
        assert old.status_code == 400 and (await sign_in(client, ANA, NEW)).status_code == 302


async def test_changing_the_password_needs_the_current_one_and_ends_the_other_sessions(site: RunningServer
                                                                                      ) -> None:
    async with browser(site) as here, browser(site) as there:
        await sign_up(here, ANA)
        await sign_in(there, ANA)
        wrong = await post_form(here, "/account/password", {"current": "not my password", "password": NEW},
                                page="/account/settings")
        assert wrong.status_code == 400 and "not your current password" in wrong.text
        assert await is_signed_in(there)
        old_cookie = here.cookies[sessions.COOKIE]
        done = await post_form(here, "/account/password", {"current": PASSWORD, "password": NEW},
                               page="/account/settings")
        assert done.status_code == 302 and here.cookies[sessions.COOKIE] != old_cookie  # a new session id
        assert "Your password is changed" in (await here.get("/account/settings")).text
        assert not await is_signed_in(there)
        assert (await sign_in(there, ANA, NEW)).status_code == 302


async def test_sign_out_everywhere_ends_every_session_this_one_too(site: RunningServer) -> None:
    async with browser(site) as here, browser(site) as there:
        await sign_up(here, ANA)
        await sign_in(there, ANA)
        done = await post_form(here, "/account/signout-everywhere", {}, page="/account/settings")
        assert done.status_code == 302 and done.headers["location"] == "/account/signin"
        assert "signed out everywhere (2 sessions ended)" in (await here.get("/account/signin")).text
        assert not await is_signed_in(here) and not await is_signed_in(there)


async def test_deleting_the_account_needs_its_password_and_takes_keys_and_sessions(site: RunningServer) -> None:
    async with browser(site) as here, browser(site) as there:
        await sign_up(here, ANA)
        await sign_in(there, ANA)
        secret = secret_of(await create_key(here, "siem"))
        page = await here.get("/account/delete")
        assert page.status_code == 200 and re.search(r"its 1 API key\s", page.text)
        wrong = await post_form(here, "/account/delete", {"current": "not my password"})
        assert wrong.status_code == 400 and await is_signed_in(there)
        done = await post_form(here, "/account/delete", {"current": PASSWORD})
        assert done.status_code == 302 and done.headers["location"] == "/account/signin"
        assert not await is_signed_in(here) and not await is_signed_in(there)
        async with site.client(secret) as api:
            assert (await api.get("/api/v1/articles", params={"limit": 1})).status_code == 401
        assert (await sign_up(here, ANA)).headers["location"] == "/account/keys"  # the e-mail is free again
        assert not (await site.ctx.accounts.list_keys((await site.ctx.accounts.get_user(email=ANA)).id))


async def test_a_second_sign_up_with_an_address_tells_its_owner(site: RunningServer) -> None:
    async with browser(site) as client:
        first = await register(client, ANA)
        second = await register(client, ANA, "someone else's password")
        assert (first.status_code, first.headers["location"]) == (second.status_code, second.headers["location"])
        told = await next_mail(site, 1)
        assert told["To"] == ANA and "already has an account" in told.get_content()
        assert "/account/reset?token=" in link_in(told)
        assert (await sign_in(client, ANA, PASSWORD)).status_code == 302  # nothing changed


async def test_verify_mode_needs_the_mailed_link_before_keys(verify_site: RunningServer) -> None:
    site = verify_site
    async with browser(site) as client:
        signed_up = await register(client, ANA)
        assert "follow the link" in (await client.get(signed_up.headers["location"])).text
        first = link_in(await next_mail(site, 1))
        await sign_in(client, ANA)
        keys = await client.get("/account/keys")
        assert 'data-testid="verify-banner"' in keys.text
        refused = await create_key(client, "siem")
        assert refused.status_code == 400 and "Confirm your e-mail address first" in refused.text
        resent = await post_form(client, "/account/verify/resend", {}, page="/account/keys")
        assert resent.status_code == 302
        second = link_in(await next_mail(site, 2))
        confirmed = await client.get(second)
        assert confirmed.status_code == 302 and confirmed.headers["location"] == "/account/keys"
        assert (await client.get(first)).status_code == 400  # the user's other links went with it
        assert 'data-testid="verify-banner"' not in (await client.get("/account/keys")).text
        assert (await create_key(client, "siem")).status_code == 200
        assert (await client.get(second)).status_code == 400  # single use

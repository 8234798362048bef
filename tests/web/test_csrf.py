"""CSRF on every form of the account web, as a table, on every backend.

``FORMS`` holds a valid body for each POST route of ``web.routes``; a test checks that it names every
one, so a new form fails here until it is in the table. Each form is then posted with no token, wrong
tokens, another session's token, the same browser's token from before sign-in and an attacker's own
``_xsrf`` cookie and token planted beside the victim's session: every one is a 403 that changes nothing.
The right token goes through and changes what the form is for.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from support import RunningServer
from web_support import PASSWORD, browser, form_token, sign_up

from store import accounts, mail
from store.base import NotFound
from store.ports.allowlist import AllowEntry
from store.ports.webhooks import Webhook
from store.records import Feed, utcnow
from web import sessions
from web.routes import routes

VICTIM, ATTACKER, NEWCOMER = "victim@corp.example", "mallory@corp.example", "newcomer@corp.example"
FEED = "/account/feeds/00000000-0000-4000-8000-0000000000fe"  # the victim's saved feed (``_accounts``)
HOOK = "/account/webhooks/" + "e" * 32  # the victim's paused webhook (``_accounts``)
ALLOW = "/account/allowlist/00000000-0000-4000-8000-0000000000ae"  # the victim's allowlist entry (``_accounts``)
NEW_PASSWORD = "a brand new passphrase"


async def _reset_link(site: RunningServer) -> dict[str, str]:
    store = site.ctx.accounts
    return {"token": await accounts.issue_token(store, await store.get_user(email=VICTIM), "reset")}


async def _unverified(site: RunningServer) -> dict[str, str]:
    user = await site.ctx.accounts.get_user(email=VICTIM)
    user.unverified = True
    await site.ctx.accounts.update_user(user)
    return {}


@dataclass(frozen=True)
class Form:
    path: str
    page: str  # where the form is shown (its token comes from there)
    body: dict[str, str]
    signed_in: bool = True
    fields: Callable[[RunningServer], Awaitable[dict[str, str]]] | None = None  # more of the body, made per test


FORMS = [
    Form("/account/signup", "/account/signup", {"email": NEWCOMER, "password": PASSWORD}, signed_in=False),
    Form("/account/signin", "/account/signin", {"email": VICTIM, "password": PASSWORD}, signed_in=False),
    Form("/account/signout", "/account/keys", {}),
    Form("/account/keys", "/account/keys", {"name": "added"}),
    Form("/account/keys/kept/delete", "/account/keys/kept/delete", {}),
    Form("/account/keys/kept/rotate", "/account/keys/kept/rotate", {"grace": "1h"}),
    Form("/account/keys/kept/edit", "/account/keys/kept/edit", {"name": "renamed", "scopes": "read:iocs"}),
    Form("/account/keys/kept/deactivate", "/account/keys", {}),
    Form("/account/keys/paused/activate", "/account/keys", {}),
    Form("/account/signout-everywhere", "/account/settings", {}),
    Form("/account/password", "/account/settings", {"current": PASSWORD, "password": NEW_PASSWORD}),
    Form("/account/delete", "/account/delete", {"current": PASSWORD}),
    Form("/account/forgot", "/account/forgot", {"email": VICTIM}, signed_in=False),
    Form("/account/reset", "/account/reset?token=x", {"password": NEW_PASSWORD}, signed_in=False, fields=_reset_link),
    Form("/account/verify/resend", "/account/keys", {}, fields=_unverified),
    Form("/account/feeds", "/account/feeds", {"name": "added", "type": "ipv4"}),
    Form(f"{FEED}/edit", f"{FEED}/edit", {"name": "renamed", "confidence": "high"}),
    Form(f"{FEED}/delete", "/account/feeds", {}),
    Form("/account/webhooks", "/account/webhooks", {"url": "http://127.0.0.1:9/hook", "kinds": "ioc"}),
    Form(f"{HOOK}/resume", "/account/webhooks", {}),
    Form(f"{HOOK}/delete", "/account/webhooks", {}),
    Form("/account/allowlist", "/account/allowlist", {"entries": "corp.example"}),
    Form(f"{ALLOW}/delete", "/account/allowlist", {}),
]


def post_routes() -> list[str]:
    """The pattern of every route whose handler accepts a POST."""
    return [pattern for pattern, handler, *_ in routes(None) if "post" in _methods(handler)]  # type: ignore[arg-type]


def _methods(handler: type) -> set[str]:
    return {name for klass in handler.__mro__ if klass.__module__.startswith("web.") for name in vars(klass)}


def test_the_table_has_every_form_of_every_post_route() -> None:
    patterns = post_routes()
    assert len(patterns) >= 5
    for pattern in patterns:
        covered = [form.path for form in FORMS if re.fullmatch(pattern, form.path)]
        assert covered, f"POST {pattern} has no row in FORMS"
        for options in re.findall(r"\(([\w|]+)\)", pattern):  # each action of a route such as (delete|activate)
            for option in options.split("|"):
                assert any(re.fullmatch(pattern.replace(f"({options})", option), path) for path in covered), option
    assert all(any(re.fullmatch(pattern, form.path) for pattern in patterns) for form in FORMS)


@pytest.mark.parametrize("form", FORMS, ids=[form.path for form in FORMS])
async def test_every_form_needs_its_own_sessions_token(site: RunningServer, form: Form) -> None:
    async with browser(site) as victim, browser(site) as attacker:
        before_sign_in = await form_token(victim, "/account/signup")
        await _accounts(site, victim, attacker)
        if not form.signed_in:
            victim.cookies.clear()
            before_sign_in = await form_token(victim, form.page)
        else:  # idle long enough that any request counted as use would restart its idle clock
            session_id = sessions.session_hash(victim.cookies[sessions.COOKIE])
            await site.ctx.accounts.touch_session(session_id, utcnow() - timedelta(minutes=30))
        body = {**form.body, **(await form.fields(site) if form.fields else {})}
        state = await _state(site, victim)
        for label, token, planted in await _wrong_tokens(site, attacker, form, before_sign_in):
            refused = await _post(victim, form.path, {**body, **token}, planted)
            assert refused.status_code == 403, label
            assert sessions.COOKIE not in refused.headers.get("set-cookie", ""), label
            assert await _state(site, victim) == state, label
        done = await victim.post(form.path, data={**body, "_xsrf": await form_token(victim, form.page)})
        assert done.status_code != 403 and await _changed(site, victim, state)


async def _post(client: httpx.AsyncClient, path: str, data: dict[str, str], planted: str | None) -> httpx.Response:
    """A POST from ``client``, with the ``_xsrf`` cookie replaced by ``planted`` for this request only."""
    kept = client.cookies.get("_xsrf")
    if planted is not None:
        client.cookies.delete("_xsrf")
        client.cookies.set("_xsrf", planted, domain="127.0.0.1")
    try:
        return await client.post(path, data=data)
    finally:
        if planted is not None:
            client.cookies.delete("_xsrf")
            if kept:
                client.cookies.set("_xsrf", kept, domain="127.0.0.1")


async def _accounts(site: RunningServer, victim: httpx.AsyncClient, attacker: httpx.AsyncClient) -> None:
    await sign_up(victim, VICTIM)
    await sign_up(attacker, ATTACKER)
    await accounts.create_key(site.ctx.accounts, VICTIM, "kept")
    await accounts.create_key(site.ctx.accounts, VICTIM, "paused")
    await site.ctx.accounts.set_key_active((await site.ctx.accounts.get_user(email=VICTIM)).id, "paused", False)
    await accounts.set_tier(site.ctx.accounts, VICTIM, "pro")  # room for a second feed
    owner, now = (await site.ctx.accounts.get_user(email=VICTIM)).id, utcnow()
    await site.ctx.stores.feeds.create_feed(Feed(FEED.rsplit("/", 1)[1], owner, "kept", {}, now, now), 50)
    hook = Webhook(HOOK.rsplit("/", 1)[1], owner, "http://127.0.0.1:9/kept", {}, "whsec_x", now, paused=True)
    await site.ctx.stores.webhooks.create_webhook(hook, 10)
    entry = AllowEntry(ALLOW.rsplit("/", 1)[1], owner, "cidr", "ipv4", "10.20.0.0/16", now)
    await site.ctx.stores.allowlist.add_allow_entries([entry], 10)


async def _wrong_tokens(site: RunningServer, attacker: httpx.AsyncClient, form: Form, before_sign_in: str
                        ) -> list[tuple[str, dict[str, str], str | None]]:
    """(what, the form's token field, an ``_xsrf`` cookie to plant first) for every token that must fail."""
    rows: list[tuple[str, dict[str, str], str | None]] = [
        ("no token", {}, None), ("empty token", {"_xsrf": ""}, None),
        ("made-up token", {"_xsrf": "2|00000000|00000000000000000000000000000000|0"}, None),
        ("made-up hex", {"_xsrf": "0" * 64}, None),
        ("another session's token", {"_xsrf": await form_token(attacker, form.page)}, None)]
    if form.signed_in:
        async with browser(site) as anonymous:  # the attacker's own cookie and token, planted beside the session
            pair = await form_token(anonymous, "/account/signin")
            rows.append(("a planted cookie and its token", {"_xsrf": pair}, anonymous.cookies["_xsrf"]))
        rows.append(("this browser's token from before sign-in", {"_xsrf": before_sign_in}, None))
    return rows


async def _changed(site: RunningServer, client: httpx.AsyncClient, before: tuple[Any, ...]) -> bool:
    """Whether the state moved from ``before``; waits (up to 30 s) for mail, which leaves in the background."""
    for _ in range(300):
        if await _state(site, client) != before:
            return True
        await asyncio.sleep(0.1)
    return False


async def _state(site: RunningServer, client: httpx.AsyncClient) -> tuple[Any, ...]:
    """What a form could change: the victim's keys and password, the browser's session and its idle clock,
    the newcomer, the mail sent."""
    store = site.ctx.accounts
    try:
        victim = await store.get_user(email=VICTIM)
        keys = [(key.name, key.active, key.key_hash, key.scopes) for key in await store.list_keys(victim.id)]
        password: str | None = victim.password_hash
        feeds = [(f.name, f.filters) for f in await site.ctx.stores.feeds.list_feeds(victim.id)]
        feeds += [(h.url, h.paused) for h in await site.ctx.stores.webhooks.list_webhooks(victim.id)]
        feeds += [(e.kind, e.value) for e in await site.ctx.stores.allowlist.list_allow_entries(victim.id)]
    except NotFound:
        keys, password, feeds = [], None, []
    outbox = mail.outbox(site.ctx.settings)
    sent = sorted(path.name for path in outbox.iterdir()) if outbox.exists() else []
    cookie = client.cookies.get(sessions.COOKIE)
    found = await store.session_with_user(sessions.session_hash(cookie)) if cookie else None
    last_seen = found[0].last_seen_at if found else None
    try:
        newcomer = bool(await store.get_user(email=NEWCOMER))
    except NotFound:
        newcomer = False
    return keys, password, feeds, cookie, last_seen, newcomer, sent

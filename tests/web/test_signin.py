"""Sign-up, sign-in, sessions and throttling over real HTTP, on every backend."""

from __future__ import annotations

import statistics
import time
from datetime import timedelta

import httpx
import pytest
from support import RunningServer
from web_support import PASSWORD, XSRF, browser, form_token, post_form, register, sign_in, sign_up

from store import accounts, passwords
from store.base import NotFound
from store.records import utcnow
from web import sessions, throttle


async def test_sign_up_signs_in_with_a_hardened_cookie(site: RunningServer) -> None:
    async with browser(site) as client:
        done = await sign_up(client, "ana@corp.example")
        assert done.status_code == 302 and done.headers["location"] == "/account/keys"
        cookie = next(h for h in done.headers.get_list("set-cookie") if h.startswith(sessions.COOKIE + "="))
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
        page = await client.get("/account/keys")
        assert page.status_code == 200 and "ana@corp.example" in page.text and "Free" in page.text
    user = await site.ctx.accounts.get_user(email="ana@corp.example")
    assert user.tier == "free" and user.password_hash and user.password_hash.startswith("$argon2id$")
    assert PASSWORD not in user.password_hash


async def test_secure_cookie_when_the_public_address_is_https(site: RunningServer) -> None:
    site.ctx.settings = site.ctx.settings.replace(public_url="https://cti.example")
    async with browser(site) as client:
        done = await sign_up(client, "sec@corp.example")
        assert any("Secure" in h for h in done.headers.get_list("set-cookie") if h.startswith(sessions.COOKIE))


async def test_sign_up_errors_are_clear(site: RunningServer) -> None:
    async with browser(site) as client:
        short = await sign_up(client, "bo@corp.example", "short-pass")
        assert short.status_code == 400 and "at least 12 characters" in short.text
        assert (await sign_up(client, "bo@corp.example")).status_code == 302


async def test_a_known_e_mail_is_answered_like_a_new_one(site: RunningServer) -> None:
    answers = []
    for email, password in (("new@corp.example", PASSWORD), ("NEW@corp.example", "the intruder's password")):
        async with browser(site) as client:
            done = await register(client, email, password)
            page = await client.get(done.headers["location"])
            answers.append((done.status_code, done.headers["location"], page.status_code,
                            XSRF.sub("", page.text)))  # the form's token aside, the same page
            assert sessions.COOKIE not in client.cookies  # signing up does not sign in
    assert answers[0] == answers[1] and answers[0][:3] == (302, "/account/signin", 200)
    assert "Sign in with the e-mail and password you chose" in answers[0][3]
    assert [u.email for u in await site.ctx.accounts.list_users() if u.email.startswith("new@")] == ["new@corp.example"]
    async with browser(site) as client:
        assert (await sign_in(client, "new@corp.example", "the intruder's password")).status_code == 400
        assert (await sign_in(client, "new@corp.example")).status_code == 302


async def test_sign_ups_are_throttled_per_address(site: RunningServer) -> None:
    async with browser(site) as client:
        for n in range(throttle.SIGNUP_ADDRESS_LIMIT):
            assert (await register(client, f"p{n}@corp.example")).status_code == 302
        refused = await register(client, "one-more@corp.example")
        assert refused.status_code == 429 and "Try again in" in refused.text
    with pytest.raises(NotFound):  # refused before any work: no account
        await site.ctx.accounts.get_user(email="one-more@corp.example")


async def test_sign_ups_are_throttled_in_total(site: RunningServer) -> None:
    now = utcnow()
    for n in range(throttle.SIGNUP_TOTAL_LIMIT - 1):
        assert await throttle.sign_up(site.ctx.accounts, f"10.0.{n // 250}.{n % 250}", now) == 0
    async with browser(site) as client:
        assert (await register(client, "last@corp.example")).status_code == 302  # the 100th of the hour
        refused = await register(client, "late@corp.example")
        assert refused.status_code == 429 and "Try again in" in refused.text


async def test_closed_sign_up_answers_403_and_hides_its_links(site: RunningServer) -> None:
    site.ctx.settings = site.ctx.settings.replace(signup="closed")
    async with browser(site) as client:
        form = await client.get("/account/signup")
        assert form.status_code == 403 and "Sign-ups are closed" in form.text
        token = await form_token(client, "/account/signin")
        posted = await client.post("/account/signup", data={"email": "q@corp.example", "password": PASSWORD,
                                                            "_xsrf": token})
        assert posted.status_code == 403 and "Sign-ups are closed" in posted.text
        for path in ("/", "/account/signin"):
            page = await client.get(path)
            assert page.status_code == 200 and "/account/signup" not in page.text
    assert not any(u.email == "q@corp.example" for u in await site.ctx.accounts.list_users())


async def test_too_many_waiting_hashes_answer_busy(site: RunningServer, monkeypatch: pytest.MonkeyPatch) -> None:
    async with browser(site) as client:
        token = await form_token(client, "/account/signin")
        monkeypatch.setattr(passwords, "_admitted", [passwords.HASH_THREADS + passwords.MAX_WAITING])
        busy = await client.post("/account/signin", data={"email": "r@corp.example", "password": PASSWORD,
                                                          "_xsrf": token})
        assert busy.status_code == 503 and "busy" in busy.text and "Try again" in busy.text


async def test_wrong_email_and_wrong_password_look_the_same(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "cy@corp.example")
    async with browser(site) as client:
        timings: dict[str, list[float]] = {"email": [], "password": []}
        bodies = {}
        for _ in range(2):
            for kind, email, password in (("email", "nobody@corp.example", PASSWORD),
                                          ("password", "cy@corp.example", "wrong password!!")):
                token = await form_token(client, "/account/signin")
                started = time.perf_counter()
                page = await client.post("/account/signin", data={"email": email, "password": password,
                                                                   "_xsrf": token})
                timings[kind].append(time.perf_counter() - started)
                bodies[kind] = (page.status_code, page.text.count("Wrong e-mail or password."))
        assert bodies["email"] == bodies["password"] == (400, 1)
        # both paths verify one argon2id hash (an unknown e-mail against a dummy): same work, same time
        ratio = statistics.median(timings["email"]) / statistics.median(timings["password"])
        assert 0.4 < ratio < 2.5, timings


async def test_right_password_signs_in_and_goes_to_next(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "di@corp.example")
    async with browser(site) as client:
        redirect = await client.get("/account/usage")
        assert redirect.status_code == 302 and redirect.headers["location"] == "/account/signin?next=/account/usage"
        done = await post_form(client, "/account/signin", {"email": "di@corp.example", "password": PASSWORD,
                                                            "next": "/account/usage"})
        assert done.status_code == 302 and done.headers["location"] == "/account/usage"
        evil = await post_form(client, "/account/signin", {"email": "di@corp.example", "password": PASSWORD,
                                                            "next": "//evil.example/x"})
        assert evil.headers["location"] == "/account/keys"  # no open redirect


async def test_new_session_id_at_sign_in_and_sign_out_ends_it(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "ed@corp.example")
    async with browser(site) as client:
        client.cookies.set(sessions.COOKIE, "attacker-chosen-value", domain="127.0.0.1")
        await sign_in(client, "ed@corp.example")
        issued = client.cookies.get(sessions.COOKIE)
        assert issued and issued != "attacker-chosen-value"
        stored = await site.ctx.accounts.session_with_user(sessions.session_hash(issued))
        assert stored is not None and stored[0].id != issued  # only the hash is stored
        await post_form(client, "/account/signout", {}, page="/account/keys")
    async with browser(site) as replay:
        replay.cookies.set(sessions.COOKIE, issued, domain="127.0.0.1")
        assert (await replay.get("/account/keys")).status_code == 302  # the old cookie opens nothing
    assert await site.ctx.accounts.session_with_user(sessions.session_hash(issued)) is None


async def test_password_change_ends_every_session(site: RunningServer) -> None:
    async with browser(site) as one, browser(site) as two:
        await sign_up(one, "fa@corp.example")
        await sign_in(two, "fa@corp.example")
        await accounts.set_password(site.ctx.accounts, "fa@corp.example", "another long password")
        assert (await one.get("/account/keys")).status_code == 302
        assert (await two.get("/account/keys")).status_code == 302
        assert (await sign_in(two, "fa@corp.example", "another long password")).status_code == 302


async def test_idle_and_absolute_expiry(site: RunningServer) -> None:
    settings = site.ctx.settings
    async with browser(site) as client:
        await sign_up(client, "gu@corp.example")
        session_id = sessions.session_hash(client.cookies[sessions.COOKIE])
        idle = utcnow() - timedelta(minutes=settings.session_idle_minutes, seconds=5)
        await site.ctx.accounts.touch_session(session_id, idle)
        assert (await client.get("/account/keys")).status_code == 302
    async with browser(site) as client:
        await sign_in(client, "gu@corp.example")
        token = client.cookies[sessions.COOKIE]
        found = await site.ctx.accounts.session_with_user(sessions.session_hash(token))
        assert found is not None
        old = found[0]
        await site.ctx.accounts.delete_sessions(session_id=old.id)
        old.created_at = utcnow() - timedelta(hours=settings.session_max_hours, minutes=1)
        await site.ctx.accounts.create_session(old)  # active a second ago, signed in too long ago
        assert (await client.get("/account/keys")).status_code == 302


async def test_account_throttle_refuses_even_the_right_password(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "ha@corp.example")
        await sign_up(httpx.AsyncClient(base_url=site.url), "iv@corp.example")
    async with browser(site) as client:
        for _ in range(throttle.ACCOUNT_LIMIT):
            assert (await sign_in(client, "ha@corp.example", "not the password")).status_code == 400
        locked = await sign_in(client, "ha@corp.example")
        assert locked.status_code == 429 and "Try again in" in locked.text and "minutes" in locked.text
        # another account behind the same address is not locked by one person's typos
        assert (await sign_in(client, "iv@corp.example")).status_code == 302


async def test_address_throttle_only_after_many_attempts(site: RunningServer) -> None:
    now = utcnow()
    for n in range(throttle.ADDRESS_LIMIT - 1):
        assert await throttle.sign_in(site.ctx.accounts, f"user{n}@corp.example", "127.0.0.1", now) == 0
    async with browser(site) as client:
        await register(client, "jo@corp.example")
        assert (await sign_in(client, "jo@corp.example")).status_code == 302  # the 30th: still evaluated
        locked = await sign_in(client, "jo@corp.example")
        assert locked.status_code == 429 and "Try again in" in locked.text
    assert throttle.ADDRESS_LIMIT >= 30


async def test_rehash_when_parameters_change(site: RunningServer) -> None:
    from argon2 import PasswordHasher

    user = await accounts.create_user(site.ctx.accounts, "ka@corp.example", "free")
    user.password_hash = PasswordHasher(time_cost=1, memory_cost=8192).hash(PASSWORD)
    await site.ctx.accounts.update_user(user)
    assert await accounts.check_password(site.ctx.accounts, "ka@corp.example", PASSWORD) is not None
    upgraded = (await site.ctx.accounts.get_user(email="ka@corp.example")).password_hash
    assert upgraded and upgraded != user.password_hash and "m=8192" not in upgraded


async def test_a_next_no_header_can_carry_falls_back_to_the_keys(site: RunningServer) -> None:
    async with browser(site) as client:
        await sign_up(client, "la@corp.example")
    for target in ("/\x0b/x", "/\x0c/x", "/account/usage\x7f", "/account/us age", "/account/usagé", "/\t/evil"):
        async with browser(site) as client:
            done = await post_form(client, "/account/signin", {"email": "la@corp.example", "password": PASSWORD,
                                                                "next": target})
            assert done.status_code == 302 and done.headers["location"] == "/account/keys", repr(target)
            assert (await client.get("/account/keys")).status_code == 200
        async with browser(site) as client:
            page = await client.get("/account/signin", params={"next": target})
            assert page.status_code == 200 and 'name="next" value="/account/keys"' in page.text, repr(target)


async def test_a_session_in_use_is_refreshed_within_a_quarter_of_the_idle_time(site: RunningServer) -> None:
    site.ctx.settings = site.ctx.settings.replace(session_idle_minutes=1)
    async with browser(site) as client:
        await sign_up(client, "mo@corp.example")
        session_id = sessions.session_hash(client.cookies[sessions.COOKIE])
        twenty_seconds_ago = utcnow() - timedelta(seconds=20)
        await site.ctx.accounts.touch_session(session_id, twenty_seconds_ago)
        assert (await client.get("/account/keys")).status_code == 200
        found = await site.ctx.accounts.session_with_user(session_id)
        assert found is not None and found[0].last_seen_at > twenty_seconds_ago

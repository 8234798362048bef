"""The account web's idle clock on every backend, driven through
``web.sessions`` with explicit times: a session in use never reaches the idle limit, a pause does."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from conformance.factories import BASE, user
from support import make_settings

from config.settings import Settings
from store.ports import AccountStore
from web import sessions
from web.sessions import SignedIn


async def page_request(accounts: AccountStore, settings: Settings, token: str, now: datetime) -> SignedIn | None:
    """What every page does with its session cookie (``web.base.PageHandler.prepare``)."""
    signed_in = await sessions.find(accounts, settings, token, now)
    if signed_in is not None:
        await sessions.keep_alive(accounts, settings, signed_in, now)
    return signed_in


async def test_requests_every_20_s_keep_a_one_minute_session(accounts: AccountStore, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, session_idle_minutes=1)
    token = await sessions.start(accounts, await accounts.create_user(user()), BASE)
    for step in range(1, 10):  # three minutes of a request every 20 s
        now = BASE + timedelta(seconds=20 * step)
        assert await page_request(accounts, settings, token, now) is not None, f"signed out after {now - BASE}"
    last = BASE + timedelta(seconds=180)
    assert await page_request(accounts, settings, token, last + timedelta(seconds=61)) is None
    assert await page_request(accounts, settings, token, last + timedelta(seconds=62)) is None  # it was deleted


async def test_a_pause_longer_than_the_idle_time_signs_out(accounts: AccountStore, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, session_idle_minutes=1)
    token = await sessions.start(accounts, await accounts.create_user(user()), BASE)
    assert await page_request(accounts, settings, token, BASE + timedelta(seconds=61)) is None


async def test_the_refresh_is_a_fraction_of_the_idle_time_and_at_most_a_minute(tmp_path: Path) -> None:
    assert sessions.touch_every(make_settings(tmp_path, session_idle_minutes=1)) == timedelta(seconds=15)
    assert sessions.touch_every(make_settings(tmp_path, session_idle_minutes=120)) == timedelta(seconds=60)

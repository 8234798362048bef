"""Helpers of the account-web tests: a cookie-keeping client, forms with their _xsrf token, sign-up/in."""

from __future__ import annotations

import re

import httpx
from support import RunningServer

XSRF = re.compile(r'name="_xsrf" value="([^"]+)"')
PASSWORD = "correct horse battery"


def browser(site: RunningServer) -> httpx.AsyncClient:
    """A cookie-keeping client that does not follow redirects (tests look at them)."""
    return httpx.AsyncClient(base_url=site.url, timeout=30, follow_redirects=False)


async def form_token(client: httpx.AsyncClient, path: str) -> str:
    page = await client.get(path)
    found = XSRF.search(page.text)
    assert found, f"no _xsrf field on {path}: {page.status_code}"
    return found.group(1)


async def post_form(client: httpx.AsyncClient, path: str, data: dict[str, object], page: str | None = None
                    ) -> httpx.Response:
    token = await form_token(client, page or path)
    return await client.post(path, data={**data, "_xsrf": token})


async def register(client: httpx.AsyncClient, email: str, password: str = PASSWORD) -> httpx.Response:
    """The sign-up form alone: it answers a new and a known e-mail alike, and does not sign in."""
    return await post_form(client, "/account/signup", {"email": email, "password": password})


async def sign_up(client: httpx.AsyncClient, email: str, password: str = PASSWORD) -> httpx.Response:
    """Sign up, then sign in (the sign-in's answer); a refused sign-up's answer as it is."""
    done = await register(client, email, password)
    return await sign_in(client, email, password) if done.status_code == 302 else done


async def sign_in(client: httpx.AsyncClient, email: str, password: str = PASSWORD) -> httpx.Response:
    return await post_form(client, "/account/signin", {"email": email, "password": password})


async def create_key(client: httpx.AsyncClient, name: str, **fields: object) -> httpx.Response:
    return await post_form(client, "/account/keys", {"name": name, **fields})


SECRET = re.compile(r'data-testid="new-key-secret">(sk_live_[A-Za-z0-9_\-]+)<')


def secret_of(page: httpx.Response) -> str:
    found = SECRET.search(page.text)
    assert found, page.text[:2000]
    return found.group(1)

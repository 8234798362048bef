"""The demo accounts: two users (Free and Pro), one key each and a password, for trying the service.

Keys and passwords are stored only as hashes, so the demo secrets live in ``demo-keys.json`` (mode 0600)
inside the data dir: ``{"free": key, "pro": key, "accounts": {"free": {"email", "password"}, "pro": ...}}``.

They are made in two cases only: ``ctiwire seed --demo`` (on purpose, any configuration), and the first
start of the embedded default (no Redis, no MongoDB) on a store without users and without that file. A
production configuration never makes them, and no start recreates, reactivates or resets what an
operator deleted, deactivated or changed: a later start reports what the file holds that still works.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from store import accounts
from store.apikeys import hash_key, hashes_equal
from store.base import NotFound
from store.ports import AccountStore
from store.records import utcnow

DEMO_KEY_NAME = "demo"
DEMO_FILE = "demo-keys.json"
TIERS = ("free", "pro")


def demo_email(tier: str) -> str:
    return f"demo-{tier}@ctiwire.local"


def _read(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _write_private(path: Path, content: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(content, handle, indent=2)
    os.replace(tmp, path)


async def is_first_start(store: AccountStore, data_dir: Path) -> bool:
    """A new embedded install: no demo file and no user yet (so a deleted demo user stays deleted)."""
    return not (data_dir / DEMO_FILE).exists() and not await store.list_users()


async def _demo_user(store: AccountStore, tier: str) -> None:
    email = demo_email(tier)
    try:
        user = await store.get_user(email=email)
    except NotFound:
        await accounts.create_user(store, email, tier)
        return
    if user.tier != tier:
        await accounts.set_tier(store, email, tier)
    try:
        await store.delete_key(user.id, DEMO_KEY_NAME)
    except NotFound:
        pass


async def create_demo(store: AccountStore, data_dir: Path) -> dict[str, Any]:
    """Make (or make again) both demo users on their tiers, each with a new key and a new password,
    written to ``demo-keys.json``; the keys work once the file holds their secrets."""
    made: dict[str, accounts.NewKey] = {}
    logins: dict[str, dict[str, str]] = {}
    for tier in TIERS:
        await _demo_user(store, tier)
        made[tier] = await accounts.create_key(store, demo_email(tier), DEMO_KEY_NAME)
        password = secrets.token_urlsafe(12)  # 16 characters, 96 random bits
        await accounts.set_password(store, demo_email(tier), password)
        logins[tier] = {"email": demo_email(tier), "password": password}
    content = {**{tier: new.secret for tier, new in made.items()}, "accounts": logins}
    _write_private(data_dir / DEMO_FILE, content)
    for new in made.values():
        await accounts.deliver_key(store, new)
    return content


async def _key_line(store: AccountStore, tier: str, secret: Any) -> str:
    key = await store.key_by_hash(hash_key(secret)) if isinstance(secret, str) else None
    if key is None:
        return f"demo {tier.capitalize()} key: deleted by an operator"
    if not hashes_equal(key.key_hash, hash_key(secret)):  # found by its former hash: the file's secret is old
        return f"demo {tier.capitalize()} key: rotated by an operator"
    state = accounts.key_state(key, utcnow())
    if state != "active":
        return f"demo {tier.capitalize()} key: {state}" + (" by an operator" if state == "deactivated" else "")
    return f"demo {tier.capitalize()} key: {secret}"


async def _account_line(store: AccountStore, tier: str, entry: Any) -> str:
    email = demo_email(tier)
    try:
        await store.get_user(email=email)
    except NotFound:
        return f"demo {tier.capitalize()} account: {email} deleted by an operator"
    password = entry.get("password") if isinstance(entry, dict) else None
    if not isinstance(password, str) or await accounts.check_password(store, email, password) is None:
        return f"demo {tier.capitalize()} account: {email}  password changed by an operator"
    return f"demo {tier.capitalize()} account: {email}  password: (in {DEMO_FILE})"


async def demo_status(store: AccountStore, data_dir: Path) -> list[str]:
    """What ``demo-keys.json`` holds that still works, and what an operator removed (changing nothing)."""
    found = _read(data_dir / DEMO_FILE)
    if not found:
        return [f"no demo accounts ({data_dir / DEMO_FILE} is absent); `ctiwire seed --demo` makes new ones"]
    logins = found.get("accounts")
    logins = logins if isinstance(logins, dict) else {}
    lines = [await _key_line(store, tier, found.get(tier)) for tier in TIERS]
    return lines + [await _account_line(store, tier, logins.get(tier)) for tier in TIERS]


def first_start_lines(demo: dict[str, Any]) -> list[str]:
    """The banner of a new embedded install: the secrets just made, printed this once."""
    lines = [f"demo {tier.capitalize()} key: {demo[tier]}" for tier in TIERS]
    return lines + [f"demo {tier.capitalize()} account: {demo['accounts'][tier]['email']}  "
                    f"password: {demo['accounts'][tier]['password']}" for tier in TIERS]

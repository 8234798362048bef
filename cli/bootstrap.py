"""First start of the embedded default: demo dataset, demo users, their keys and passwords (issues 3, 14).

Keys and passwords are stored only as hashes, so the demo secrets live in ``demo-keys.json`` (mode 0600)
inside the data dir: ``{"free": key, "pro": key, "accounts": {"free": {"email", "password"}, "pro": ...}}``.
When the file no longer matches a live key or a password, a new one is made (and printed once).
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from store import accounts
from store.apikeys import hash_key
from store.base import NotFound, Store

DEMO_KEY_NAME = "demo"


def demo_email(tier: str) -> str:
    return f"demo-{tier}@ctiwire.local"


async def _valid(store: Store, secret: str) -> bool:
    key = await store.key_by_hash(hash_key(secret))
    return key is not None and key.active


def _read(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


async def _live_keys(store: Store, found: dict[str, Any]) -> dict[str, str] | None:
    keys = {tier: found.get(tier) for tier in ("free", "pro")}
    for secret in keys.values():
        if not isinstance(secret, str) or not await _valid(store, secret):
            return None
    return keys  # type: ignore[return-value]


async def _live_accounts(store: Store, found: dict[str, Any]) -> dict[str, dict[str, str]] | None:
    demo = found.get("accounts")
    if not isinstance(demo, dict):
        return None
    for tier in ("free", "pro"):
        entry = demo.get(tier)
        if not isinstance(entry, dict) or entry.get("email") != demo_email(tier) or \
                await accounts.check_password(store, demo_email(tier), str(entry.get("password"))) is None:
            return None
    return demo


async def _fresh_password(store: Store, tier: str) -> dict[str, str]:
    password = secrets.token_urlsafe(12)  # 16 characters, 96 random bits
    await accounts.set_password(store, demo_email(tier), password)
    return {"email": demo_email(tier), "password": password}


async def _fresh_key(store: Store, tier: str) -> str:
    email = demo_email(tier)
    try:
        user = await store.get_user(email=email)
    except NotFound:
        user = await accounts.create_user(store, email, tier)
    try:
        await store.delete_key(user.id, DEMO_KEY_NAME)
    except NotFound:
        pass
    return (await accounts.create_key(store, email, DEMO_KEY_NAME)).secret


def _write_private(path: Path, content: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(content, handle, indent=2)
    os.replace(tmp, path)


async def ensure_demo_keys(store: Store, data_dir: Path) -> tuple[dict[str, Any], bool]:
    """One Free and one Pro demo key and account, valid now; written to ``$CTIWIRE_DATA_DIR/demo-keys.json``.
    Also says whether the account passwords are new (they are printed once, when made)."""
    path = data_dir / "demo-keys.json"
    found = _read(path)
    keys = await _live_keys(store, found) or {tier: await _fresh_key(store, tier) for tier in ("free", "pro")}
    demo = await _live_accounts(store, found)
    fresh = demo is None
    if demo is None:
        demo = {tier: await _fresh_password(store, tier) for tier in ("free", "pro")}
    content = {**keys, "accounts": demo}
    if content != found:
        _write_private(path, content)
    return content, fresh

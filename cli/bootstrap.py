"""First start of the embedded default: demo dataset, demo users and their keys (issue 3).

Keys are stored only as hashes, so the secrets of the demo keys live in ``demo-keys.json`` (mode 0600)
inside the data dir; when that file no longer matches live keys, new demo keys are made.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from store import accounts
from store.apikeys import hash_key
from store.base import NotFound, Store

DEMO_KEY_NAME = "demo"


def demo_email(tier: str) -> str:
    return f"demo-{tier}@ctiwire.local"


async def _valid(store: Store, secret: str) -> bool:
    key = await store.key_by_hash(hash_key(secret))
    return key is not None and key.active


async def _read_existing(store: Store, path: Path) -> dict[str, str] | None:
    try:
        keys = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(keys, dict) or set(keys) != {"free", "pro"}:
        return None
    for secret in keys.values():
        if not isinstance(secret, str) or not await _valid(store, secret):
            return None
    return keys


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


def _write_private(path: Path, keys: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(keys, handle, indent=2)
    os.replace(tmp, path)


async def ensure_demo_keys(store: Store, data_dir: Path) -> dict[str, str]:
    """One Free and one Pro demo key, valid now; written to ``$CTIWIRE_DATA_DIR/demo-keys.json``."""
    path = data_dir / "demo-keys.json"
    existing = await _read_existing(store, path)
    if existing is not None:
        return existing
    keys = {tier: await _fresh_key(store, tier) for tier in ("free", "pro")}
    _write_private(path, keys)
    return keys

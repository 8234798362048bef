"""Key delivery and the demo accounts on every backend: a key works only once its secret was handed out,
and the demo bootstrap (cli/bootstrap.py) never undoes what an operator removed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli import bootstrap
from store import accounts as account_rules
from store.apikeys import hash_key
from store.base import NotFound
from store.ports import AccountStore
from store.records import utcnow


async def test_a_new_key_is_pending_until_delivered(accounts: AccountStore) -> None:
    await account_rules.create_user(accounts, "ana@example.com", "pro")
    new = await account_rules.create_key(accounts, "ana@example.com", "ci")
    saved = await accounts.key_by_hash(hash_key(new.secret))
    assert saved is not None and (saved.active, saved.pending) == (False, True)
    assert account_rules.key_state(saved, utcnow()) == "never delivered"
    assert await accounts.key_with_user(hash_key(new.secret)) is not None  # known, so it answers expired, not invalid
    await account_rules.deliver_key(accounts, new)
    [listed] = await accounts.list_keys(saved.user_id)
    assert (listed.active, listed.pending, account_rules.key_state(listed, utcnow())) == (True, False, "active")
    await accounts.set_key_active(saved.user_id, "ci", False)
    [listed] = await accounts.list_keys(saved.user_id)
    assert account_rules.key_state(listed, utcnow()) == "deactivated"


async def test_the_demo_bootstrap_keeps_what_an_operator_removed(accounts: AccountStore, tmp_path: Path) -> None:
    assert await bootstrap.is_first_start(accounts, tmp_path)
    demo = await bootstrap.create_demo(accounts, tmp_path)
    assert not await bootstrap.is_first_start(accounts, tmp_path)
    pro = await accounts.get_user(email="demo-pro@ctiwire.local")
    free = await accounts.get_user(email="demo-free@ctiwire.local")
    await accounts.delete_user(pro.id)
    await accounts.set_key_active(free.id, bootstrap.DEMO_KEY_NAME, False)
    lines = "\n".join(await bootstrap.demo_status(accounts, tmp_path))
    assert "sk_live_" not in lines and demo["accounts"]["free"]["password"] not in lines
    assert "deleted by an operator" in lines and "deactivated by an operator" in lines
    assert json.loads((tmp_path / bootstrap.DEMO_FILE).read_text()) == demo
    assert not await bootstrap.is_first_start(accounts, tmp_path)
    [key] = await accounts.list_keys(free.id)
    assert not key.active
    with pytest.raises(NotFound):  # the deleted demo user stays deleted
        await accounts.get_user(email="demo-pro@ctiwire.local")

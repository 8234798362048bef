"""``ctiwire sightings list VALUE``: every report of a value, oldest first, with its account and note (the
audit behind the counts and a revocation by consensus)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from support import cli_env, ctiwire

from store import accounts
from store.records import Sighting, utcnow
from store.sqlite import sqlite_stores

pytestmark = pytest.mark.slow  # runs the CLI as a process


async def _reported(path: Path) -> None:
    stores = sqlite_stores(path)
    await stores.open()
    try:
        ana = await accounts.create_user(stores.accounts, "ana@corp.example", "pro")
        bob = await accounts.create_user(stores.accounts, "bob@corp.example", "free")
        now = utcnow()
        reports = [(ana.id, "seen", "proxy\tlog\nline"), (ana.id, "seen", ""), (bob.id, "false_positive", "CDN")]
        await stores.sightings.add_sightings(
            [
                Sighting(
                    str(uuid.uuid4()),
                    user,
                    "domain",
                    "evil.example",
                    kind,
                    now - timedelta(hours=1),
                    now + timedelta(seconds=n),
                    note,
                )
                for n, (user, kind, note) in enumerate(reports)
            ]
        )
        await stores.accounts.delete_user(bob.id)
    finally:
        await stores.close()


def test_list_prints_every_report_with_its_account(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    asyncio.run(_reported(tmp_path / "ctiwire.sqlite3"))
    lines = ctiwire(env, "sightings", "list", "evil[.]example").splitlines()
    assert lines[0] == "domain evil.example: 3 reports; distinct accounts: 1 seen, 1 false positive"
    assert lines[1].split("\t") == ["reported", "observed", "account", "kind", "note"]
    rows = [line.split("\t") for line in lines[2:]]
    assert [(r[2], r[3], r[4]) for r in rows] == [
        ("ana@corp.example", "seen", "proxy log line"),
        ("ana@corp.example", "seen", ""),
        (f"{rows[2][2].split()[0]} (deleted)", "false_positive", "CDN"),
    ]
    assert rows[0][0] < rows[1][0] < rows[2][0] and rows[0][1] < rows[0][0]
    empty = ctiwire(env, "sightings", "list", "calm.example").splitlines()
    assert empty[0] == "domain calm.example: 0 reports; distinct accounts: 0 seen, 0 false positive"

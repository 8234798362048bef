"""``ctiwire iocs revoke``: an operator withdraws an indicator by its (defanged) value; the record says why
and when, and a missing or unknown value is one line, exit 1 or 2."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conformance.factories import ioc

from cli.main import main
from store.records import Ioc, utcnow
from store.sqlite import sqlite_stores


async def _stored(path: Path, *records: Ioc) -> Ioc | None:
    stores = sqlite_stores(path)
    await stores.open()
    try:
        await stores.iocs.upsert_iocs(records)
        return await stores.iocs.get_ioc("domain", "evil.example")
    finally:
        await stores.close()


def test_revoke_by_a_defanged_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CTIWIRE_DATA_DIR", str(tmp_path))
    now = utcnow()
    asyncio.run(_stored(tmp_path / "ctiwire.sqlite3", ioc("evil.example", first_seen=now, last_seen=now, modified=now)))
    assert main(["iocs", "revoke", "evil[.]example", "--reason", "sinkholed"]) == 0
    assert "revoked domain evil.example at" in capsys.readouterr().out
    record = asyncio.run(_stored(tmp_path / "ctiwire.sqlite3"))
    assert record is not None and record.revoked and record.revoked_reason == "sinkholed"
    assert main(["iocs", "revoke", "other.example", "--reason", "x"]) == 1
    assert "no domain record 'other.example'" in capsys.readouterr().err
    assert main(["iocs", "revoke", "not an indicator", "--reason", "x"]) == 1

"""``ctiwire iocs revoke``: an operator withdraws an indicator by its (defanged) value; the record says why
and when, a second revocation says the first stands, and a missing, unknown or mistyped value is one line,
exit 1 or 2."""

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


def _one_record(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A data dir holding the domain evil.example, reported now, as the CLI's store."""
    monkeypatch.setenv("CTIWIRE_DATA_DIR", str(data_dir))
    now = utcnow()
    asyncio.run(_stored(data_dir / "ctiwire.sqlite3", ioc("evil.example", first_seen=now, last_seen=now, modified=now)))


def test_revoke_by_a_defanged_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_record(tmp_path, monkeypatch)
    assert main(["iocs", "revoke", "evil[.]example", "--reason", "sinkholed"]) == 0
    assert "revoked domain evil.example at" in capsys.readouterr().out
    record = asyncio.run(_stored(tmp_path / "ctiwire.sqlite3"))
    assert record is not None and record.revoked and record.revoked_reason == "sinkholed"
    assert main(["iocs", "revoke", "other.example", "--reason", "x"]) == 1
    assert "no domain record 'other.example'" in capsys.readouterr().err
    assert main(["iocs", "revoke", "not an indicator", "--reason", "x"]) == 1


def test_a_second_revocation_says_the_first_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_record(tmp_path, monkeypatch)
    assert main(["iocs", "revoke", "evil.example", "--reason", "sinkholed"]) == 0
    first = capsys.readouterr().out
    assert main(["iocs", "revoke", "evil.example", "--reason", "taken down"]) == 0
    again = capsys.readouterr().out
    assert again.startswith("already revoked: domain evil.example at ") and again.endswith(": sinkholed\n")
    assert first.split(" at ")[1] == again.split(" at ")[1]  # the first time and reason stand
    record = asyncio.run(_stored(tmp_path / "ctiwire.sqlite3"))
    assert record is not None and record.revoked_reason == "sinkholed"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["iocs", "revoke", "203.0.113.9", "--type", "domain", "--reason", "x"],
            "'203.0.113.9' is a ipv4 value, not a domain value",
        ),
        (["sightings", "list", "evil", "--type", "domain"], "'evil' is not a recognised indicator"),
        (["sightings", "list", "evil.example", "--type", "url"], "'evil.example' is a domain value, not a url value"),
    ],
)
def test_a_value_of_another_type_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    monkeypatch.setenv("CTIWIRE_DATA_DIR", str(tmp_path))
    assert main(args) == 1
    assert capsys.readouterr().err.startswith(f"ctiwire: {message}")

"""The registry, the shared interface, and the export job (exporters/precompute.py) driving every format end to end."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporters import precompute
from exporters.base import Exporter, indicator_id, stable_uuid
from exporters.registry import EXPORTERS, UnknownFormat, get_exporter
from store.ports import Stores
from store.records import CTIWIRE_NAMESPACE, Ioc, iso, parse_iso


def test_every_use_of_the_formats_derives_from_the_registry() -> None:
    """Routes, OpenAPI paths, scopes, costs, CLI choices and precompute jobs come from EXPORTERS."""
    from application.app import openapi_document
    from cli.main import _parser
    from config.tiers import IOC_EXPORT_COST, LIST_EXPORT_COST, SCOPES
    from exporters.registry import format_cost

    documented = {path.rsplit("/", 1)[1] for path in openapi_document()["paths"] if path.startswith("/api/v1/iocs/")}
    assert set(EXPORTERS) == set(precompute.EXPORT_FORMATS) == documented - {"search", "stats"}
    export_cli = _parser()._subparsers._group_actions[0].choices["export"]  # type: ignore[union-attr]
    assert next(a for a in export_cli._actions if a.dest == "format").choices == tuple(EXPORTERS)
    assert {r.format for r in precompute.standard_requests()} == set(EXPORTERS)
    for fmt, cls in EXPORTERS.items():
        assert issubclass(cls, Exporter) and cls.format_id == fmt and get_exporter(fmt) is cls
        assert cls.scope in SCOPES and cls.summary and cls.extension
        assert format_cost(fmt) == cls.cost == (LIST_EXPORT_COST if fmt in ("blocklist", "rpz") else IOC_EXPORT_COST)


def test_unknown_format_is_a_clear_key_error() -> None:
    with pytest.raises(KeyError) as info:
        get_exporter("csv")
    assert isinstance(info.value, UnknownFormat)
    assert "unknown export format 'csv'" in str(info.value) and "stix" in str(info.value)


def test_dated_file_names() -> None:
    when = datetime(2026, 11, 23, 13, 0, 59, tzinfo=UTC)
    assert EXPORTERS["stix"].filename(when) == "ctiwire-iocs-20261123T1300Z.stix.json"
    names = {fmt: cls().filename(when) for fmt, cls in EXPORTERS.items()}
    assert names["misp"].endswith(".misp.json") and names["cef"].endswith(".cef.log")
    assert names["openioc"].endswith(".ioc.xml") and names["sigma"].endswith(".sigma.yml")
    assert names["blocklist"].endswith(".blocklist.txt") and names["rpz"].endswith(".rpz.zone")
    assert names["suricata"].endswith(".suricata.rules") and names["ecs"].endswith(".ecs.ndjson")
    assert all(name.endswith(cls.extension) for name, cls in zip(names.values(), EXPORTERS.values(), strict=True))


async def test_export_job_builds_every_format_from_a_store(stores: Stores, records: list[Ioc], now: datetime,
                                                          check: Any) -> None:
    await stores.iocs.upsert_iocs(records)
    validate = {**check.all(), "sigma": lambda body: check.sigma(body, lambda i: "EscapedWildcard" in type(i).__name__)}
    for fmt in EXPORTERS:
        request = precompute.ExportRequest(fmt, "pro", "30d", limit=1000)
        entry = await precompute.build_export(stores, request, now, 1)
        assert entry.meta.media_type == EXPORTERS[fmt].media_type and entry.meta.rows == len(records)
        assert entry.meta.filename == EXPORTERS[fmt].filename(now)
        validate[fmt](entry.body)


@given(name=st.text(max_size=40), other=st.text(max_size=10))
def test_fast_uuid5_is_rfc4122_uuid5(name: str, other: str) -> None:
    try:
        name.encode()
    except UnicodeEncodeError:
        return  # lone surrogates are no record value
    assert stable_uuid(name, other) == str(uuid.uuid5(CTIWIRE_NAMESPACE, f"{name}:{other}"))


@given(value=st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(9999, 12, 30),
                          timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]) | st.none()))
def test_iso_is_rfc3339_utc_with_milliseconds(value: datetime) -> None:
    utc = (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    expected = f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}." \
               f"{utc.microsecond // 1000:03d}Z"
    assert iso(value) == expected
    assert parse_iso(iso(value)) == utc.replace(microsecond=utc.microsecond // 1000 * 1000)


def test_indicator_id_matches_the_records_stix_id(ioc: Any) -> None:
    record = ioc("url", "http://x.example/ä?q=1")
    assert indicator_id(record) == record.stix_id

"""The plain-text blocklist, read back the way list consumers read it (tests/format_tools.py): one value per
line under ``#`` comments, each type's stated count matching its lines."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from exporters import precompute
from exporters.base import ExportContext
from exporters.blocklist import BlocklistExporter
from store.ports import Stores
from store.query import IocFilters, IocQuery
from store.records import Ioc

LISTED = ("ipv4", "ipv6", "domain", "url", "md5", "sha1", "sha256", "sha512", "email")


def test_every_value_once_per_type_with_counts(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    body = BlocklistExporter().render(records + records[:5], ctx)
    sections = check.blocklist(body)
    expected = {t: sorted({r.value for r in records if r.type == t}) for t in LISTED}
    assert sections == expected and list(sections) == list(LISTED)  # registry order, values sorted
    text = body.decode()
    assert "# generated 2026-11-23T13:00:00.000Z\n" in text and "# filters: none\n" in text
    assert "# 1 CVE or ATT&CK technique record(s) omitted: it is context" in text


async def test_one_type_through_the_export_job_states_its_filters(
    stores: Stores, records: list[Ioc], now: datetime, check: Any
) -> None:
    await stores.iocs.upsert_iocs(records)
    filters = IocFilters(types=("ipv4", "ipv6"))
    request = precompute.ExportRequest("blocklist", "pro", "30d", filters=filters, limit=1000)
    entry = await precompute.build_export(stores, request, now, 1)
    sections = check.blocklist(entry.body)
    total = await stores.iocs.count_iocs(IocQuery(types=("ipv4", "ipv6"), since=request.window_since(now)))
    assert set(sections) == {"ipv4", "ipv6"} and sum(map(len, sections.values())) == total == entry.meta.rows
    assert b"# filters: type=ipv4,ipv6, limit=1000\n" in entry.body


def test_a_value_no_line_can_carry_is_counted_not_injected(
    ioc: Callable[..., Ioc], ctx: ExportContext, check: Any
) -> None:
    hostile = [
        ioc("url", "http://x.example/a\nevil.example"),
        ioc("url", "http://x.example/ b"),
        ioc("domain", "#not-a-comment.example"),
        ioc("url", "http://x.example/ok"),
    ]
    body = BlocklistExporter().render(hostile, ctx)
    assert check.blocklist(body) == {"url": ["http://x.example/ok"]}
    assert b"# 3 record(s) omitted: the value holds whitespace or a control character" in body
    assert b"evil.example\n" not in body


def test_an_empty_result_is_the_header_alone(ctx: ExportContext, check: Any) -> None:
    body = BlocklistExporter().render([], ctx)
    assert check.blocklist(body) == {} and body.startswith(b"# ctiwire blocklist")

"""The DNS Response Policy Zone, loaded by BIND's own ``named-checkzone`` (full integrity and name checks)
and read back from its canonical dump."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from exporters.base import ExportContext
from exporters.rpz import RpzExporter
from store.records import Ioc

ZONE = "rpz.ctiwire."


def soa_serial(records: list[tuple[str, str, str]]) -> int:
    [soa] = [data for _owner, rtype, data in records if rtype == "SOA"]
    return int(soa.split()[2])


def test_every_domain_and_its_subdomains_answer_nxdomain(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    zone = check.rpz(RpzExporter().render(records, ctx))
    domains = {r.value for r in records if r.type == "domain"}
    triggers = {owner for owner, rtype, data in zone if rtype == "CNAME" and data == "."}
    assert triggers == {f"{d}.{ZONE}" for d in domains} | {f"*.{d}.{ZONE}" for d in domains}
    assert {(owner, rtype) for owner, rtype, _ in zone if rtype in ("SOA", "NS")} == {(ZONE, "SOA"), (ZONE, "NS")}
    assert len(zone) == 2 + 2 * len(domains)  # nothing but the apex and the triggers


def test_the_serial_grows_with_the_hour_and_with_changed_data(
    ioc: Callable[..., Ioc], ctx: ExportContext, check: Any
) -> None:
    first = [ioc("domain", "a.example", modified=ctx.generated_at - timedelta(hours=2))]
    changed = [*first, ioc("domain", "b.example", modified=ctx.generated_at + timedelta(minutes=20))]
    later = replace(ctx, generated_at=ctx.generated_at + timedelta(hours=1))
    serials = [
        soa_serial(check.rpz(RpzExporter().render(rows, c)))
        for rows, c in ((first, ctx), (first, ctx), (changed, ctx), (changed, later))
    ]
    assert serials[0] == serials[1] == int(ctx.generated_at.timestamp())  # a rebuild of the same data: the same
    assert serials[0] < serials[2] < serials[3]


def test_names_a_zone_cannot_hold_are_counted(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    long_name = ".".join(["a" * 60] * 4) + ".example"  # 252 characters: valid DNS, no room beneath a zone name
    rows = [
        ioc("domain", "ok.example"),
        ioc("domain", "bad_label.example"),
        ioc("domain", "x" * 64 + ".example"),
        ioc("domain", long_name),
        ioc("domain", "semi;colon.example"),
        ioc("ipv4", "203.0.113.7"),
    ]
    body = RpzExporter().render(rows, ctx)
    zone = check.rpz(body)
    assert {owner for owner, rtype, _ in zone if rtype == "CNAME"} == {f"ok.example.{ZONE}", f"*.ok.example.{ZONE}"}
    assert b"; 4 domain record(s) omitted: not a DNS name a zone can hold" in body
    assert b"; 1 IPv4 address" in body and b"record(s) omitted: the zone blocks DNS names only" in body


def test_an_empty_zone_still_loads(ctx: ExportContext, check: Any) -> None:
    assert [rtype for _, rtype, _ in check.rpz(RpzExporter().render([], ctx))] == ["SOA", "NS"]

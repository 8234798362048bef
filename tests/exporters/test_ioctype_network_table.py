"""Every registered IOC type in the network formats (blocklist, DNS RPZ, Suricata, ECS): the exact per-type
fact appears in the output, checked by the format's own tool (tests/format_tools.py).

As in test_ioctype_table.py the expected facts are pinned here, not read from the registry, and the table
must have a row for every registered type.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from exporters.base import ExportContext
from exporters.blocklist import BlocklistExporter
from exporters.ecs import EcsExporter
from exporters.rpz import RpzExporter
from exporters.suricata import SuricataExporter
from store.ioctypes import REGISTRY
from tests.exporters.conftest import make_ioc


class Row(NamedTuple):
    blocklist: bool  # listed (else left out and counted)
    rpz: bool  # a trigger for the name and *.name
    suricata: tuple[str, ...]  # the rule protocols, in order (empty: left out and counted)
    ecs: tuple[str, str] | None  # threat.indicator.type and the field holding the value


TABLE: dict[str, Row] = {
    "ipv4": Row(True, False, ("ip",), ("ipv4-addr", "ip")),
    "ipv6": Row(True, False, ("ip",), ("ipv6-addr", "ip")),
    "domain": Row(True, True, ("dns", "tls", "http"), ("domain-name", "url.domain")),
    "url": Row(True, False, ("http",), ("url", "url.full")),
    "md5": Row(True, False, (), ("file", "file.hash.md5")),
    "sha1": Row(True, False, (), ("file", "file.hash.sha1")),
    "sha256": Row(True, False, (), ("file", "file.hash.sha256")),
    "sha512": Row(True, False, (), ("file", "file.hash.sha512")),
    "email": Row(True, False, (), ("email-addr", "email.address")),
    "cve": Row(False, False, (), None),
    "mitre-attack": Row(False, False, (), None),
}
TYPES = list(REGISTRY)


def test_the_table_has_a_row_for_every_registered_type() -> None:
    assert set(TABLE) == set(REGISTRY)


def _record(ioc_type: str) -> Any:
    return make_ioc(ioc_type, REGISTRY[ioc_type].example, confidence="high")


def _omitted(body: bytes, ioc_type: str) -> bool:
    """Whether a comment line counts the record as left out (types sharing a reason share the line)."""
    label = REGISTRY[ioc_type].label
    return any(label in line and "record(s) omitted: " in line for line in body.decode().splitlines())


@pytest.mark.parametrize("ioc_type", TYPES)
def test_blocklist(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    record = _record(ioc_type)
    body = BlocklistExporter().render([record], ctx)
    listed = check.blocklist(body)
    assert listed == ({ioc_type: [record.value]} if TABLE[ioc_type].blocklist else {})
    assert _omitted(body, ioc_type) != TABLE[ioc_type].blocklist


@pytest.mark.parametrize("ioc_type", TYPES)
def test_rpz(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    record = _record(ioc_type)
    body = RpzExporter().render([record], ctx)
    triggers = {owner for owner, rtype, _ in check.rpz(body) if rtype == "CNAME"}
    expected = {f"{record.value}.rpz.ctiwire.", f"*.{record.value}.rpz.ctiwire."} if TABLE[ioc_type].rpz else set()
    assert triggers == expected and _omitted(body, ioc_type) != TABLE[ioc_type].rpz


@pytest.mark.parametrize("ioc_type", TYPES)
def test_suricata(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    body = SuricataExporter().render([_record(ioc_type)], ctx)
    rules = check.suricata(body)
    assert tuple(r.proto for r in rules) == TABLE[ioc_type].suricata
    assert _omitted(body, ioc_type) != bool(TABLE[ioc_type].suricata)


@pytest.mark.parametrize("ioc_type", TYPES)
def test_ecs(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    record = _record(ioc_type)
    documents = check.ecs(EcsExporter().render([record], ctx))
    expected = TABLE[ioc_type].ecs
    if expected is None:
        assert documents == []
    else:
        [document] = documents
        indicator_type, field = expected
        assert document["threat.indicator.type"] == indicator_type
        assert document[f"threat.indicator.{field}"] == record.value

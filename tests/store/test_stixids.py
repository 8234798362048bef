"""The STIX id rule the store indexes is the one the exporters build (STIX 2.1 s. 2.9, 4.7, 4.19)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from exporters.stix import stix_object
from store.records import IOC_TYPES, Ioc
from store.stixids import object_id, vulnerability_id

WHEN = datetime(2026, 1, 5, tzinfo=UTC)


@pytest.mark.parametrize("ioc_type", IOC_TYPES)
def test_object_id_is_the_id_of_the_built_object(ioc_type: str) -> None:
    value = {"cve": "CVE-2024-3400", "mitre-attack": "T1059.001"}.get(ioc_type, f"{ioc_type}-value")
    record = Ioc(ioc_type, value, "high", "Feed", "government", WHEN, WHEN, WHEN)
    assert record.stix_id == object_id(ioc_type, value) == stix_object(record)["id"]
    prefix = {"cve": "vulnerability--", "mitre-attack": "attack-pattern--"}.get(ioc_type, "indicator--")
    assert record.stix_id.startswith(prefix)


def test_spellings_of_one_cve_share_an_object_id() -> None:
    assert object_id("cve", "cve-2024-3400") == object_id("cve", "CVE-2024-3400") == vulnerability_id("CVE-2024-3400")

"""Every registered type the article scan is said to find has its scan rule, and the rule finds it."""

from __future__ import annotations

import pytest

from ingest.enrich import CLI_IOC_TYPES
from ingest.enrich.iocs import ioc_order
from ingest.enrich.scan import RULES, scan_line
from store.ioctypes import REGISTRY, IocTypeSpec

SPECS = list(REGISTRY.values())


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_scan_rule_exists_and_finds_the_type(spec: IocTypeSpec) -> None:
    found = [(c.type, c.value) for c in scan_line(f"The actor used {spec.example} in the campaign.", 0)]
    if isinstance(spec.scan, str):
        assert spec.scan in RULES
        assert (spec.name, spec.example) in found
    else:
        assert all(kind != spec.name for kind, _ in found), "an unscanned type came out of the scan"


def test_cli_keys_and_article_order_are_the_scanned_types_in_registry_order() -> None:
    scanned = tuple(s.name for s in SPECS if isinstance(s.scan, str))
    assert CLI_IOC_TYPES == ioc_order() == scanned
    assert scanned == ("ipv4", "ipv6", "domain", "url", "md5", "sha1", "sha256", "sha512", "email")

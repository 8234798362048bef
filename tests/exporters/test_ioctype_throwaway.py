"""A type added to the registry reaches every consumer: each one handles it or refuses it the way
``store.ioctypes.POLICIES`` declares (``raise``: ``UnsupportedIocType``; ``skip``: left out, counted and
explained in the document), never a ``KeyError`` and never a silent drop."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sigma.collection import SigmaCollection

from exporters.base import ExportContext
from exporters.lookup_risk import hunting_queries
from exporters.registry import EXPORTERS
from ingest.enrich.scan import scan_line
from store import ioc_values, ioctypes
from store.indicators import detect_type
from store.ioctypes import POLICIES, REGISTRY, IocTypeSpec, UnsupportedIocType
from taxii.collections import COLLECTIONS, stix_type_of
from tests.exporters.conftest import make_ioc

NS = "{http://openioc.org/schemas/OpenIOC_1.1}"
SHA384 = "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b"
# A type every consumer can express (scan excepted), and one none can.
_SIGMA_FILES = ioctypes.SigmaSource("x-hash", "Files with reported SHA-384 digests", "file_event", "windows",
                                   "Hashes|contains")
FULL = IocTypeSpec(
    "x-sha384", "SHA-384", SHA384, ioc_values.hex_digest(96), ioc_values.lowercase,
    ioctypes.Unsupported("the test scan has no 96-digit hex rule"),
    ioctypes.Stix("indicator", "file:hashes.'SHA-384'"), ioctypes.Misp("sha384", "Payload delivery", True),
    ioctypes.Cef("Malicious file SHA-384", "fileHash", 255), ioctypes.Unsupported("OpenIOC 1.1 has no term for them"),
    ioctypes.Sigma(_SIGMA_FILES, "SHA384="),
    ioctypes.Hunting(("file_hash",), ("file.hash.sha384",), "DeviceFileEvents | where SHA384 =~ {v}"), "file-hashes",
    ioctypes.Blocklist("endpoint hash list"), ioctypes.Unsupported("a zone holds names, not digests"),
    ioctypes.Unsupported("the test rules match no file digests"), ioctypes.Ecs("file", ("file.hash.sha384",)))
BARE = IocTypeSpec("x-bare", "bare test value", "bare:1", lambda v: v.startswith("bare:"), str.strip,
                   *(ioctypes.Unsupported(f"the bare type has no {consumer} form") for consumer in POLICIES))


@pytest.fixture
def registered() -> Iterator[None]:
    for spec in (FULL, BARE):
        ioctypes.register(spec)
    yield
    for spec in (FULL, BARE):
        ioctypes.unregister(spec.name)
    assert "x-sha384" not in REGISTRY and "x-bare" not in REGISTRY


@pytest.mark.parametrize("fmt", list(EXPORTERS))
def test_every_exporter_handles_or_refuses_a_new_type(registered: None, fmt: str, ctx: ExportContext,
                                                      check: Any) -> None:
    exporter = EXPORTERS[fmt]()
    full = make_ioc("x-sha384", SHA384.upper(), confidence="high")
    bare = make_ioc("x-bare", "bare:1")
    assert full.value == SHA384  # the registry's normaliser spelled it
    body = exporter.render([full], ctx)
    getattr(check, fmt)(body)
    if ioctypes.supported("x-sha384", fmt):
        assert SHA384.encode() in body and b"omitted" not in body
    else:
        reason = REGISTRY["x-sha384"].reason_for(fmt)
        assert f"SHA-384 record(s) omitted: {reason}".encode() in body and SHA384.encode() not in body
    if POLICIES[fmt] == "raise":
        with pytest.raises(UnsupportedIocType, match="the bare type has no") as refused:
            exporter.render([full, bare], ctx)
        assert (refused.value.ioc_type, refused.value.consumer) == ("x-bare", fmt)
    else:
        out = exporter.render([full, bare, bare], ctx)
        getattr(check, fmt)(out)
        assert f"2 bare test value record(s) omitted: the bare type has no {fmt} form".encode() in out
        assert b"bare:1" not in out


def test_new_type_facts_reach_each_format(registered: None, ctx: ExportContext, check: Any) -> None:
    full = make_ioc("x-sha384", SHA384)
    stix = check.stix(EXPORTERS["stix"]().render([full], ctx))
    assert f"[file:hashes.'SHA-384' = '{SHA384}']" in [o.get("pattern") for o in stix["objects"]]
    [attribute] = check.misp(EXPORTERS["misp"]().render([full], ctx))["Event"]["Attribute"]
    assert (attribute["type"], attribute["category"]) == ("sha384", "Payload delivery")
    [line] = check.cef(EXPORTERS["cef"]().render([full], ctx))
    assert line["name"] == "Malicious file SHA-384" and line["extension"]["fileHash"] == SHA384
    doc = check.openioc(EXPORTERS["openioc"]().render([full], ctx))
    assert doc.find(f"{NS}criteria/{NS}Indicator/{NS}IndicatorItem") is None
    sigma = EXPORTERS["sigma"]().render([full], ctx)
    check.sigma(sigma)
    [rule] = SigmaCollection.from_yaml(sigma.decode()).rules
    assert rule.logsource.category == "file_event" and f"SHA384={SHA384}" in sigma.decode()
    assert check.blocklist(EXPORTERS["blocklist"]().render([full], ctx)) == {"x-sha384": [SHA384]}
    [document] = check.ecs(EXPORTERS["ecs"]().render([full], ctx))
    assert (document["threat.indicator.type"], document["threat.indicator.file.hash.sha384"]) == ("file", SHA384)


def test_new_type_in_lookup_taxii_and_detection(registered: None) -> None:
    assert 'file.hash.sha384: "' + SHA384 + '"' in hunting_queries("x-sha384", SHA384)["elastic_kql"]
    with pytest.raises(UnsupportedIocType, match="hunting"):
        hunting_queries("x-bare", "bare:1")
    holding = {c.id: c.ioc_types for c in COLLECTIONS}
    assert "x-sha384" in holding["file-hashes"] and "x-bare" in holding["all-iocs"]
    assert not any("x-bare" in types for cid, types in holding.items() if cid != "all-iocs")
    assert stix_type_of("x-sha384") == "indicator"
    assert detect_type(SHA384) == "x-sha384" and detect_type("bare:1") == "x-bare"
    assert all(c.type not in ("x-sha384", "x-bare") for c in scan_line(f"sample {SHA384} and bare:1", 0))

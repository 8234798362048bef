"""The demo dataset, exported through the real job (store -> records -> articles -> encoder) in every format,
each document checked by its own validator."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from exporters import precompute
from exporters.registry import EXPORTERS
from ingest.demo import seed_store
from store.decay import STATUSES
from store.ports import Stores
from store.query import IocFilters
from store.sqlite import SqliteStore

DEMO_ARTICLES = 400
# The validators are slow on big documents (stix2-validator takes about 7 ms per object, and demo records
# bring several CVE and technique relationships each; the MISP schema's uniqueItems check is quadratic):
# a hundred-odd records already cover every type and shape.
LIMIT = 120


@pytest.fixture
async def demo_store(stores: Stores, now: datetime) -> tuple[Stores, int]:
    _articles, records = await seed_store(stores, DEMO_ARTICLES, now)
    return stores, records


async def test_demo_exports_pass_their_validators(demo_store: tuple[SqliteStore, int], now: datetime,
                                                  check: Any) -> None:
    stores, records = demo_store
    assert records > LIMIT
    validate = {**check.all(), "sigma": lambda body: check.sigma(body, lambda i: "EscapedWildcard" in type(i).__name__)}
    for fmt in EXPORTERS:
        request = precompute.ExportRequest(fmt, "pro", "365d", limit=LIMIT)
        entry = await precompute.build_export(stores, request, now, 1)
        assert entry.meta.rows == LIMIT and entry.meta.media_type == EXPORTERS[fmt].media_type
        assert entry.meta.filename == EXPORTERS[fmt].filename(precompute.as_of(now))
        document = validate[fmt](entry.body)
        if fmt == "stix":
            assert any(o.get("external_references") for o in document["objects"] if o["type"] == "indicator")
            assert {o["type"] for o in document["objects"]} >= {"identity", "indicator", "relationship"}


@pytest.mark.slow  # the whole demo dataset: about 17,000 records from 5,000 articles
async def test_every_cef_line_of_the_whole_demo_export_passes_cefp_and_cefevent_strict(
        stores: Stores, now: datetime, check: Any) -> None:
    from config.settings import Settings

    articles = Settings().seed_articles  # what `ctiwire seed` loads
    _articles, records = await seed_store(stores, articles, now)
    # Every record: expired and revoked demo records too, and the documentation-range addresses (on a
    # warninglist).
    every = IocFilters(statuses=STATUSES, include_warninglisted=True)
    request = precompute.ExportRequest("cef", "pro", "365d", filters=every, limit=records)
    entry = await precompute.build_export(stores, request, now, 1)
    assert len(check.cef(entry.body)) == entry.meta.rows > records * 0.9  # all within Pro's year
    # Records list at most their RECENT_LINKS most recent CVEs and techniques, so cs6 stays within 4,000
    # characters on this data; the cut of a longer list (whole ids, then "(+N more)") is tested in test_cef.

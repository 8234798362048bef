"""A saved feed's filters checked on a record's API form (the live stream) agree with the store's query of
the same filters on every backend, field by field."""

from __future__ import annotations

from dataclasses import fields

import orjson
import pytest
from conformance.factories import ioc

from store.event_filter import StreamFilter
from store.ports import IocStore
from store.query import FORM_VALUES, IocFilters
from store.records import utcnow

NOW = utcnow()
RECORDS = [
    ioc(
        f"h{n}-bad.com" if n % 2 else f"198.51.100.{n}",
        "domain" if n % 2 else "ipv4",
        confidence=("high", "medium", "low")[n % 3],
        source_category=("government", "commercial")[n % 2],
        industries=[("finance", "energy", "retail")[n % 3]],
        sources=[f"Feed {n % 4}"],
        threat_actors=["lazarus"] if n % 4 == 0 else [],
        severity=n * 0.8,
        # Reported now: active, so the store's default status (active) and the form check agree on them.
        first_seen=NOW, last_seen=NOW, modified=NOW,
    )
    for n in range(14)
]
CASES = [
    IocFilters(types=("ipv4",)),
    IocFilters(confidences=("high", "low")),
    IocFilters(categories=("government",)),
    IocFilters(industries=("finance",)),
    IocFilters(sources=("Feed 1", "Feed 2")),
    IocFilters(threat_actors=("lazarus",)),
    IocFilters(severities=("critical",)),
    IocFilters(severities=("low", "high")),
    IocFilters(types=("domain",), severities=("medium", "high"), industries=("energy", "retail")),
    IocFilters(confidences=("high",), statuses=("active",)),
    IocFilters(min_score=60),
]


def test_every_filter_field_is_read_from_the_api_form() -> None:
    # min_score is a bound on the form's score, and include_warninglisted the caller's switch: not any-of lists.
    assert set(FORM_VALUES) == {f.name for f in fields(IocFilters)} - {"min_score", "include_warninglisted"}


@pytest.mark.parametrize("filters", CASES, ids=lambda f: orjson.dumps(f.as_params()).decode())
async def test_the_form_check_selects_what_the_store_selects(iocs: IocStore, filters: IocFilters) -> None:
    await iocs.upsert_iocs(RECORDS)
    stored = {r.value for r in await iocs.all_iocs(filters.query(limit=100))}
    checked = {r.value for r in RECORDS if filters.matches(r.to_api())}
    assert stored == checked and 0 < len(stored) < len(RECORDS)


def test_a_stream_filter_keeps_its_feed_through_its_stored_form() -> None:
    flt = StreamFilter(kinds=("ioc",), feed=CASES[-1])
    doc = orjson.loads(orjson.dumps(flt.to_doc()))
    assert StreamFilter.from_doc(doc) == flt and StreamFilter.from_doc(StreamFilter().to_doc()) == StreamFilter()

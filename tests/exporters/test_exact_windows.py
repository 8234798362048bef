"""An export's window starts exactly at its lookback, and its cache entry answers exactly as long as the
window holds the same records: the entry is rebuilt once the window's start passes its oldest record."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from exporters import precompute
from store.cache import MemoryCache
from store.ports import Stores
from store.records import Ioc

NOW = datetime(2026, 3, 10, 12, 30, 0, tzinfo=UTC)  # half past: an hour-aligned start would be 30 min early
DAY = timedelta(days=1)


def _ioc(value: str, modified: datetime) -> Ioc:
    return Ioc("domain", value, "high", "Feed", "community", modified, modified, modified)


async def _export(stores: Stores, cache: MemoryCache, now: datetime) -> tuple[str, str]:
    request = precompute.ExportRequest("stix", "free", "1d")
    entry, status = await precompute.cached_export(stores, cache, request, now, ttl=3600, on_demand_ttl=3600)
    return entry.body.decode(), status


async def test_the_window_starts_a_day_before_now_to_the_minute(stores: Stores) -> None:
    await stores.iocs.upsert_iocs(
        [
            _ioc("older.example", NOW - DAY - timedelta(minutes=1)),
            _ioc("newer.example", NOW - DAY + timedelta(minutes=1)),
        ]
    )
    body, status = await _export(stores, MemoryCache(), NOW)
    assert status == "miss" and "newer.example" in body and "older.example" not in body


async def test_the_cached_entry_lasts_while_its_records_stay_in_the_window(stores: Stores) -> None:
    oldest = NOW - DAY + timedelta(minutes=10)
    await stores.iocs.upsert_iocs([_ioc("leaves.example", oldest), _ioc("stays.example", NOW - timedelta(hours=1))])
    cache = MemoryCache()
    first, built = await _export(stores, cache, NOW)
    again, hit = await _export(stores, cache, NOW + timedelta(minutes=9))  # the start is still before `oldest`
    later, rebuilt = await _export(stores, cache, NOW + timedelta(minutes=11))  # the start passed it
    assert (built, hit, rebuilt) == ("miss", "hit", "miss")
    assert again == first and "leaves.example" in first
    assert "leaves.example" not in later and "stays.example" in later
    _, hit_again = await _export(stores, cache, NOW + timedelta(hours=2))
    assert hit_again == "hit"  # the rebuilt entry holds until its own oldest record leaves


async def test_an_entry_is_not_served_for_an_earlier_start(stores: Stores) -> None:
    """A process whose clock is behind must not be served a window that started later than its own."""
    await stores.iocs.upsert_iocs([_ioc("edge.example", NOW - DAY + timedelta(seconds=30))])
    cache = MemoryCache()
    await _export(stores, cache, NOW + timedelta(minutes=1))  # built after edge.example left the window
    body, status = await _export(stores, cache, NOW)
    assert status == "miss" and "edge.example" in body

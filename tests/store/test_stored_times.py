"""``parse_stored``: the fast reading of the store's own timestamps agrees with ``parse_iso``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from store.records import iso, parse_iso, parse_stored


def test_the_stores_own_form_reads_as_parse_iso_reads_it() -> None:
    start = datetime(2026, 1, 31, 23, 59, 59, 999_000, tzinfo=UTC)
    for step in range(0, 400_000_000, 7_777_777):
        text = iso(start + timedelta(milliseconds=step))
        assert parse_stored(text) == parse_iso(text) and parse_stored(text).tzinfo == UTC


def test_other_forms_fall_back_to_parse_iso() -> None:
    for text in ("2026-03-01T10:00:00+02:00", "2026-03-01", "2026-03-01T10:00:00.123456Z", "2026-03-01t10:00:00z"):
        assert parse_stored(text) == parse_iso(text)

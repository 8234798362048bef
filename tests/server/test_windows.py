"""Tier windows and caps (spec, Limits 3; Response headers): every case of the clamp, the cap and the flags."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from server.windows import cap_limit, clamp_since, window_headers
from store.records import lookback_floor

NOW = datetime(2026, 3, 10, 12, 0, 0, 250_000, tzinfo=UTC)  # a fraction of a second: the floor rounds


@pytest.mark.parametrize("days", [1, 7, 365])
def test_the_floor_never_reaches_before_the_lookback(days: int) -> None:
    """Rounded up to the whole second, never down: no row older than ``days`` is admitted."""
    floor = lookback_floor(days, NOW)
    assert floor == datetime(2026, 3, 10, 12, 0, 1, tzinfo=UTC) - timedelta(days=days)
    assert floor >= NOW - timedelta(days=days)


def test_a_floor_on_a_whole_second_is_kept() -> None:
    whole = NOW.replace(microsecond=0)
    assert lookback_floor(1, whole) == whole - timedelta(days=1)


FLOOR = lookback_floor(1, NOW)


@pytest.mark.parametrize(("since", "effective", "clamped"), [
    (None, FLOOR, False),  # no since: the whole lookback, nothing to flag
    (FLOOR - timedelta(days=30), FLOOR, True),  # older than the lookback: clamped and flagged
    (FLOOR - timedelta(microseconds=1), FLOOR, True),
    (FLOOR, FLOOR, False),  # exactly the floor is inside the lookback
    (FLOOR + timedelta(hours=3), FLOOR + timedelta(hours=3), False),
], ids=["none", "older", "just-older", "at-floor", "inside"])
def test_since_is_clamped_to_the_lookback_and_flagged_only_then(
        since: datetime | None, effective: datetime, clamped: bool) -> None:
    window = clamp_since(since, 1, NOW)
    assert (window.since, window.floor, window.clamped, window.lookback_days) == (effective, FLOOR, clamped, 1)


@pytest.mark.parametrize(("limit", "expected"), [(-7, (1, False)), (0, (1, False)), (1, (1, False)),
                                                 (99, (99, False)), (100, (100, False)), (101, (100, True)),
                                                 (10_000, (100, True))])
def test_a_limit_out_of_range_is_clamped_and_flagged_above_the_cap(limit: int, expected: tuple[int, bool]) -> None:
    assert cap_limit(limit, 100) == expected


@pytest.mark.parametrize(("since", "capped", "headers"), [
    (None, False, {"X-Tier-Lookback-Days": "7"}),
    (NOW - timedelta(days=30), False, {"X-Tier-Lookback-Days": "7", "X-Tier-Lookback-Clamped": "true"}),
    (None, True, {"X-Tier-Lookback-Days": "7", "X-Limit-Capped": "true"}),
    (NOW - timedelta(days=30), True,
     {"X-Tier-Lookback-Days": "7", "X-Tier-Lookback-Clamped": "true", "X-Limit-Capped": "true"}),
])
def test_the_headers_name_the_lookback_always_and_each_flag_when_it_applies(
        since: datetime | None, capped: bool, headers: dict[str, str]) -> None:
    assert window_headers(clamp_since(since, 7, NOW), capped) == headers

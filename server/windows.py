"""Tier windows and caps shared by every list endpoint (spec, Limits 3).

``since`` older than the tier lookback is clamped silently and flagged; ``limit`` above the tier cap
is reduced and flagged. Pure functions: the handler turns the flags into headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from config.tiers import Tier
from exporters.lookup import LookupWindow
from store.records import lookback_floor


@dataclass(frozen=True, slots=True)
class Window:
    """The effective lower time bound of a request and whether the caller's ``since`` was clamped."""

    since: datetime
    floor: datetime
    clamped: bool
    lookback_days: int


def within_lookback(moment: datetime, lookback_days: int, now: datetime) -> bool:
    """Whether a record dated ``moment`` lies inside a tier's lookback (a single read obeys it too)."""
    return moment >= now - timedelta(days=lookback_days)


def lookup_window(tier: Tier, now: datetime) -> LookupWindow:
    """What a lookup by ``tier`` may see: IOC records inside its IOC lookback (the floor ``/iocs/search``
    applies), related articles inside its article lookback."""
    return LookupWindow(lookback_floor(tier.ioc_lookback_days, now), lookback_floor(tier.article_lookback_days, now))


def clamp_since(since: datetime | None, lookback_days: int, now: datetime) -> Window:
    """Clamp ``since`` to the lookback floor (:func:`lookback_floor`); no ``since`` means the whole lookback."""
    floor = lookback_floor(lookback_days, now)
    if since is None:
        return Window(floor, floor, False, lookback_days)
    if since < floor:
        return Window(floor, floor, True, lookback_days)
    return Window(since, floor, False, lookback_days)


def cap_limit(limit: int, cap: int) -> tuple[int, bool]:
    """(effective limit, capped?) for a requested ``limit`` and the tier's cap. Out-of-range values are
    clamped (spec, Limits 3): above the cap to the cap, flagged; below 1 to 1, as a page holds at least one row."""
    return (cap, True) if limit > cap else (max(limit, 1), False)


def window_headers(window: Window, limit_capped: bool) -> dict[str, str]:
    """X-Tier-Lookback-Days always; X-Tier-Lookback-Clamped and X-Limit-Capped when they apply."""
    headers = {"X-Tier-Lookback-Days": str(window.lookback_days)}
    if window.clamped:
        headers["X-Tier-Lookback-Clamped"] = "true"
    if limit_capped:
        headers["X-Limit-Capped"] = "true"
    return headers

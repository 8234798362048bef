"""Usage history: requests and refusals (429) per API key, or per web budget (``web:<user id>``), and UTC
day, for the account web's usage page. Each server process counts in memory and adds its counts in batches
(``server.usage_tally``), so every write is an atomic increment: several processes add into the same rows."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

# Days of history kept: the page shows 30; older rows go when a later batch is added.
KEEP_USAGE_DAYS = 90


@dataclass(frozen=True, slots=True)
class UsageDay:
    """What one key (or web budget) was charged on one UTC day: requests, and how many of them got a 429."""

    key_id: str
    day: str  # YYYY-MM-DD (UTC)
    requests: int
    refused: int


def oldest_kept(days: Sequence[UsageDay]) -> str:
    """The first day still kept once ``days`` are added."""
    newest = max(date.fromisoformat(d.day) for d in days)
    return (newest - timedelta(days=KEEP_USAGE_DAYS)).isoformat()


class UsageHistory(abc.ABC):
    """The usage-history part of ``store.ports.AccountStore``: counts per key, deleted with nothing else."""

    @abc.abstractmethod
    async def add_usage(self, days: Sequence[UsageDay]) -> None:
        """Add each row's counts to its (key, day) atomically, creating it when missing."""

    @abc.abstractmethod
    async def usage_history(self, key_ids: Sequence[str], since_day: str) -> list[UsageDay]:
        """The rows of ``key_ids`` from ``since_day`` (YYYY-MM-DD) on, ordered by key, then day."""

"""Sightings: accounts' reports that a value was seen, or is a false positive (POST /api/v1/sightings).

Every report is kept (the audit, ``ctiwire sightings list``); what counts is how many distinct accounts
reported each kind for a value, so one account's repeated reports count once.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import NamedTuple

from store.records import Sighting

IocKey = tuple[str, str]  # (type, normalised value)


class Tally(NamedTuple):
    """Distinct accounts that reported a value ``seen`` and ``false_positive``."""

    seen: int = 0
    false_positives: int = 0


class SightingStore(abc.ABC):
    """Async storage of sighting reports."""

    @abc.abstractmethod
    async def add_sightings(self, sightings: Sequence[Sighting]) -> dict[IocKey, Tally]:
        """Keep every report; the tally of each value reported, counting the reports just added."""

    @abc.abstractmethod
    async def list_sightings(self, ioc_type: str, value: str) -> list[Sighting]:
        """Every report of the value, oldest first (then by id)."""

    @abc.abstractmethod
    async def tallies(self, keys: Sequence[IocKey] | None = None) -> dict[IocKey, Tally]:
        """The tally of each of ``keys`` that has reports (None: of every reported value)."""

    @abc.abstractmethod
    async def false_positives_of(self, user_id: str) -> frozenset[IocKey]:
        """The values the account reported as false positives: its exports and TAXII pages leave them out."""
